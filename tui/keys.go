package tui

import "charm.land/bubbles/v2/key"

// KeyMap is the dashboard's one keymap; the help view reads it too.
type KeyMap struct {
	Next, Prev, Zoom, Pause, Filter, Class   key.Binding
	Checkpoint, Crash, Slower, Faster        key.Binding
	BiggerHot, SmallerHot, Help, Quit, Clear key.Binding
}

// DefaultKeyMap returns the bindings documented in docs/tui.md.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Next:       b("tab", "next panel", "tab", "right", "l"),
		Prev:       b("shift+tab", "previous panel", "shift+tab", "left", "h"),
		Zoom:       b("enter", "zoom panel", "enter", "z"),
		Pause:      b("p", "pause", "p", "space"),
		Filter:     b("/", "filter log", "/"),
		Class:      b("f", "log class", "f"),
		Clear:      b("esc", "clear filter / unzoom", "esc"),
		Checkpoint: b("c", "checkpoint now", "c"),
		Crash:      b("x", "crash & restore", "x"),
		Slower:     b("+", "latency up", "+", "="),
		Faster:     b("-", "latency down", "-", "_"),
		BiggerHot:  b("]", "hot budget up", "]"),
		SmallerHot: b("[", "hot budget down", "["),
		Help:       b("?", "help", "?"),
		Quit:       b("q", "quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the one-line footer: the hints, then help and quit.
func (k KeyMap) ShortHelp() []key.Binding { return append(k.hints(), k.Help, k.Quit) }

// hints are the footer's bindings that a narrow footer cuts.
func (k KeyMap) hints() []key.Binding {
	return []key.Binding{k.Next, k.Pause, k.Filter, k.Checkpoint, k.Crash, k.Slower, k.Faster}
}

// FullHelp is the help overlay, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.Prev, k.Zoom, k.Pause},
		{k.Filter, k.Class, k.Clear},
		{k.Checkpoint, k.Crash},
		{k.Slower, k.Faster, k.BiggerHot, k.SmallerHot},
		{k.Help, k.Quit},
	}
}
