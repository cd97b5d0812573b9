package mutterframes

// Open is the number of displays whose screen cast is open.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sources)
}
