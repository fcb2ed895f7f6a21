package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// completionShells are the shells `triage completion SHELL` writes a script for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// newCompletionCmd is `triage completion SHELL`: the shell's completion script on stdout.
// It replaces cobra's default command, whose parent prints its help and exits 0 for a shell
// it doesn't know (`triage completion tcsh`): here that is a usage error naming the shells.
func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion SHELL",
		Short: "Print the shell completion script (bash, zsh, fish or powershell)",
		Long: `Print the completion script of a shell (bash, zsh, fish or powershell) on stdout. Load
it in the current shell with source <(triage completion bash), or save it where the shell
looks for completions (see the examples); start a new shell afterwards. Bash needs the
bash-completion package.`,
		Example: `  triage completion bash > ~/.local/share/bash-completion/completions/triage
  triage completion zsh > "${fpath[1]}/_triage"
  triage completion fish > ~/.config/fish/completions/triage.fish
  source <(triage completion bash)`,
		Args:                  completionArgs,
		ValidArgs:             completionShells,
		DisableFlagsInUseLine: true,
	}
	noDesc := cmd.Flags().Bool("no-descriptions", false, "leave the descriptions of commands and flags out of the completions")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, out := cmd.Root(), cmd.OutOrStdout()
		switch args[0] {
		case "bash":
			return root.GenBashCompletionV2(out, !*noDesc)
		case "zsh":
			if *noDesc {
				return root.GenZshCompletionNoDesc(out)
			}
			return root.GenZshCompletion(out)
		case "fish":
			return root.GenFishCompletion(out, !*noDesc)
		default: // powershell: completionArgs let nothing else through
			if *noDesc {
				return root.GenPowerShellCompletion(out)
			}
			return root.GenPowerShellCompletionWithDesc(out)
		}
	}
	return cmd
}

// completionArgs wants exactly one shell triage knows.
func completionArgs(cmd *cobra.Command, args []string) error {
	shells := strings.Join(completionShells[:len(completionShells)-1], ", ") + " or " + completionShells[len(completionShells)-1]
	switch {
	case len(args) == 0:
		return usageErr("%s: name a shell: %s (see %s --help)", cmdName(cmd), shells, cmd.CommandPath())
	case len(args) > 1:
		return usageErr("%s: want one shell, got %d arguments (see %s --help)", cmdName(cmd), len(args), cmd.CommandPath())
	case !slices.Contains(completionShells, args[0]):
		return usageErr("%s: unknown shell %q: triage completes in %s", cmdName(cmd), args[0], shells)
	}
	return nil
}
