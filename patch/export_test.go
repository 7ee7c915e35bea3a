package patch

// SetPruneShortcut turns prune's keepsAll shortcut on or off, for tests
// that check it changes nothing; it returns the previous setting.
func SetPruneShortcut(on bool) bool {
	was := pruneUnchanged
	pruneUnchanged = on
	return was
}
