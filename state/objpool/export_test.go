package objpool

// ServedRuns returns the served checkpoint's manifest key and its runs,
// partition by partition (newest first), for the external tests.
func ServedRuns(p *Pool) (string, [][]RunRef) {
	m := p.servedManifest()
	return m.key, m.Runs
}
