package mutterframes

// Open is the number of displays whose screen cast is open.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sources)
}

// Frames is the number of frames read from dpy's pipeline (0 when its
// screen cast is not open).
func (h *Hub) Frames(dpy string) int {
	h.mu.Lock()
	s := h.sources[dpy]
	h.mu.Unlock()
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}
