package main

//go:generate go run ./internal/keytable/keytablegen -in keymap.go -out tui/keytable.go

// keyTable is the product's key table: every action of the TUI, its default keys and its help,
// by area. It is the one place the defaults are written.
//
// Columns: the action's name in the config's [keys] table; its field in tui.KeyMap; its
// default keys (bubbletea's names, space-separated: "ctrl+d", "shift+tab", "space", "pgdown",
// "G"); the keys as the help shows them; the help text. A "#" line starts an area (much as
// the `?` help groups them). A key may mean one action per view (space marks a row in the table and
// pages the detail view; y copies in the table and says yes in a confirm).
//
// How it reaches the TUI: tui/keytable.go (tui.DefaultKeyMap and the action names) is generated
// from this table by internal/keytable/keytablegen (the go:generate line at the top of this file: run
// `go generate ./...` after editing the table), so package tui and its tests have the defaults
// without importing the root package. TestKeyTable fails when that file is stale, and never
// writes it. internal/cli builds the KeyMap with tui.ApplyKeys and hands it to the
// program in tui.Options.KeyMap, the only way a KeyMap reaches a running TUI (triage, demo,
// and each session of serve).
//
// How [keys] overrides apply (tui.ApplyKeys, the one validator: `triage config check` and every
// start of the TUI call it, DESIGN invariant 12):
//
//	[keys]
//	set_status = ["t"]          # replaces the action's keys: s no longer sets the status
//	quit = ["Z", "ctrl+c"]      # several keys; the help shows them as "Z/ctrl+c"
//	preview = []                # unbinds the action: no key does it, the help shows "-"
//
// The rules:
//
//   - An action's keys are replaced, never added to; the help text stays the table's.
//   - An unknown action is a problem naming it and every valid action.
//   - A key bound to two actions live in the same view (the table, the detail view, the help, a
//     confirm, a picker, the group view, the progress view, the filter prompt) is a problem,
//     unless they do the same thing there (back, clear and quit all leave the detail view).
//   - ctrl+c (interrupt) always quits, or cancels a running replay first: only quit and cancel
//     may share it.
//   - Every problem is reported at once, each with its line in the config; the TUI does not
//     start on a [keys] table with a problem (exit 2), as `triage config check` fails on it.
const keyTable = `
# Navigate: the table, and the detail view, the help, a picker, the group and progress views
up                | Up              | up k                 | ↑/k          | up
down              | Down            | down j               | ↓/j          | down
top               | Top             | g home               | g/home       | top
bottom            | Bottom          | G end                | G/end        | bottom
half_down         | HalfDown        | ctrl+d               | ctrl+d       | half page down
half_up           | HalfUp          | ctrl+u               | ctrl+u       | half page up
page_down         | PageDown        | pgdown               | pgdn         | page down
page_up           | PageUp          | pgup                 | pgup         | page up

# Tabs
next_tab          | NextTab         | tab                  | tab          | next tab
prev_tab          | PrevTab         | shift+tab            | shift+tab    | previous tab
tab_1             | Tab1            | 1                    | 1            | first tab
tab_2             | Tab2            | 2                    | 2            | second tab
tab_3             | Tab3            | 3                    | 3            | third tab

# Views over the table
detail            | Detail          | enter                | enter        | detail
preview           | Preview         | p                    | p            | preview
filter            | Filter          | /                    | /            | filter
sort              | Sort            | S                    | S            | sort by column
clear             | Clear           | esc                  | esc          | clear / back
groups            | Groups          | c                    | c            | groups: source × error
next_view         | NextView        | ]                    | ]            | next saved view
prev_view         | PrevView        | [                    | [            | previous saved view
command           | Command         | :                    | :            | command line (:inbox, :view NAME, :q)
wide              | Wide            | ctrl+w               | ctrl+w       | wide: every column, cells whole
scroll_left       | ScrollLeft      | left h               | ←/h          | wide: scroll left
scroll_right      | ScrollRight     | right l              | →/l          | wide: scroll right

# Select
mark              | Mark            | space                | space        | mark
mark_all          | MarkAll         | *                    | *            | mark all shown
unmark_all        | UnmarkAll       | V                    | V            | unmark all

# Change the sheet
set_status        | SetStatus       | s                    | s            | set status
clear_error       | ClearError      | e                    | e            | clear sticky error
discard           | Discard         | D                    | D            | discard dead letter
requeue_stale     | Requeue         | Q                    | Q            | requeue stale claims
undo              | Undo            | u                    | u            | undo last change

# Replay (dead letters)
replay            | Replay          | R                    | R            | replay marked / row
replay_all        | ReplayAll       | A                    | A            | replay all shown
edit_payload      | EditPayload     | E                    | E            | edit payload & replay
cancel            | Cancel          | x                    | x            | cancel replay
replay_progress   | Progress        | P                    | P            | show replay progress

# App
refresh           | Refresh         | r                    | r            | refresh
help              | Help            | ?                    | ?            | help
quit              | Quit            | q ctrl+c             | q            | quit
suspend           | Suspend         | ctrl+z               | ctrl+z       | suspend (fg resumes)
interrupt         | Interrupt       | ctrl+c               | ctrl+c       | stop run / quit

# The detail view's pager (as in less and neomutt)
pager_page_down   | PagerDown       | space f pgdown       | space/f/pgdn | page down
pager_page_up     | PagerUp         | b pgup               | b/pgup       | page up
next_field        | NextField       | tab                  | tab          | next field
prev_field        | PrevField       | shift+tab            | shift+tab    | previous field
next_row          | NextRow         | J                    | J            | next row
prev_row          | PrevRow         | K                    | K            | previous row
search            | Search          | /                    | /            | search the text
search_next       | SearchNext      | n                    | n            | next match
search_prev       | SearchPrev      | N                    | N            | previous match

# Copy (OSC 52) and reply: the table and the detail view
copy              | Copy            | y                    | y            | copy ID / field
copy_link         | CopyLink        | o                    | o            | copy sheet link
reply             | Reply           | m                    | m            | reply (mailto: link)

# Dialogs and views over the table
compose_send      | ComposeSend     | ctrl+s               | ctrl+s       | reply composer: end, then send
back              | Back            | esc                  | esc          | back / close
confirm_yes       | ConfirmYes      | y Y                  | y            | confirm: yes
confirm_no        | ConfirmNo       | n N enter q          | N            | confirm: no
confirm_list      | ConfirmList     | d tab                | d/tab        | confirm: dry run
picker_choose     | PickerChoose    | enter                | enter        | picker: choose
groups_filter     | GroupsFilter    | enter                | enter        | groups: filter
run_close         | RunClose        | enter                | enter        | ended run: back

# The filter prompt and its line (emacs-style editing, as readline has it)
filter_keep       | FilterKeep      | enter                | enter        | keep filter
filter_cancel     | FilterCancel    | esc                  | esc          | clear filter
filter_prev       | FilterPrev      | up                   | ↑            | cursor up
filter_next       | FilterNext      | down                 | ↓            | cursor down
input_delete_back | InputDeleteBack | backspace ctrl+h     | backspace    | delete back
input_delete      | InputDelete     | delete ctrl+d        | delete       | delete forward
input_left        | InputLeft       | left ctrl+b          | ←            | left
input_right       | InputRight      | right ctrl+f         | →            | right
input_home        | InputHome       | home ctrl+a          | home         | start of line
input_end         | InputEnd        | end ctrl+e           | end          | end of line
input_kill_before | InputKillBefore | ctrl+u               | ctrl+u       | delete to start
input_kill_after  | InputKillAfter  | ctrl+k               | ctrl+k       | delete to end
input_delete_word | InputDeleteWord | ctrl+w alt+backspace | ctrl+w       | delete word
input_complete    | InputComplete   | tab                  | tab          | complete (command line)
`
