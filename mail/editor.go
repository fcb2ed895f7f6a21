package mail

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// EditorCommand is the command that opens a draft file in the person's editor: $VISUAL,
// else $EDITOR, else vi, read through getenv (the caller's settings resolver, the only
// reader of the environment). The setting may carry arguments ("code --wait",
// "emacsclient -t"), split at spaces; it is not run by a shell. The caller connects the
// terminal (the TUI through tea.ExecProcess, a command through os.Stdin and os.Stdout) and
// reads the file back once the editor exits.
func EditorCommand(getenv func(string) string, path string) (*exec.Cmd, error) {
	setting, from := "", ""
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if getenv != nil {
			if v := strings.TrimSpace(getenv(name)); v != "" {
				setting, from = v, name
				break
			}
		}
	}
	if setting == "" {
		setting, from = "vi", "the default"
	}
	args := strings.Fields(setting)
	prog, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("can't find the editor %q (%s): set $EDITOR to an editor this machine has", args[0], from)
	}
	return exec.Command(prog, append(args[1:], path)...), nil
}

// WriteDraft writes a draft to a new file in dir (os.TempDir() when ""), readable by its
// owner only (it holds a message from the sheet), named *.eml so editors show it as mail.
// The caller removes it once the draft is read back.
func WriteDraft(dir, draft string) (string, error) {
	f, err := os.CreateTemp(dir, "triage-reply-*.eml")
	if err != nil {
		return "", fmt.Errorf("can't write the draft: %v", err)
	}
	if _, err := f.WriteString(draft); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("can't write the draft: %v", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("can't write the draft: %v", err)
	}
	return f.Name(), nil
}
