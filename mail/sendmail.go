package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// stderrMax is how much of a sendmail program's output an error quotes.
const stderrMax = 2000

// sendSendmail hands msg to [mail] sendmail, run as `PATH -i -- RECIPIENTS` with the
// message on its standard input in local line ends (LF). The recipients are arguments,
// after "--" so an address can never be read as an option, and Bcc reaches the program
// only there; -i keeps a line holding a lone "." from ending the message. The program is
// killed when ctx ends. Exit 0 means it took the message; any other exit means it did not,
// and its output is in the error.
func (m *Mailer) sendSendmail(ctx context.Context, rcpts []string, msg []byte) error {
	path := strings.TrimSpace(m.sec.Sendmail)
	args := append([]string{"-i", "--"}, rcpts...)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = bytes.NewReader(bytes.ReplaceAll(msg, []byte("\r\n"), []byte("\n")))
	out := &capped{max: stderrMax}
	cmd.Stdout, cmd.Stderr = out, out
	// A program that leaves a child holding its output open must not hold the send.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	shown := model.SanitizeLine(path)
	said := ""
	if s := strings.TrimSpace(out.String()); s != "" {
		said = ": it said " + quoteCell(s, 300)
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return mayHaveLanded("%s did not finish within %s and was stopped%s (check the mail log, and raise [mail] timeout if it is slow)", shown, m.timeout(), said)
	case ctx.Err() != nil:
		return mayHaveLanded("%s was stopped (cancelled)%s", shown, said)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%s does not exist: check [mail] sendmail, or install a sendmail program (postfix, msmtp-mta); nothing was sent", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s can't be run (permission denied): check [mail] sendmail names a program you may run; nothing was sent", shown)
	case errors.As(err, &exit):
		return fmt.Errorf("%s did not take the message (%s)%s; nothing was sent", shown, exit.ProcessState, said)
	}
	return fmt.Errorf("can't run %s (%s); nothing was sent", shown, model.SanitizeLine(err.Error()))
}

// capped keeps the first max bytes written to it, and says when there were more.
type capped struct {
	buf  bytes.Buffer
	max  int
	more bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.more = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.more = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	s := strings.ToValidUTF8(c.buf.String(), "\uFFFD")
	if c.more {
		s += "…"
	}
	return s
}
