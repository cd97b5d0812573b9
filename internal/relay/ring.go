package relay

// ring is a fixed-capacity FIFO of items with contiguous, increasing ids:
// pushing onto a full ring drops the oldest item. It is not safe for
// concurrent use (the Relay's mutex guards it).
type ring[T any] struct {
	buf   []T
	start int   // index of the oldest item
	n     int   // items held
	first int64 // id of the oldest item
}

func newRing[T any](capacity int) ring[T] { return ring[T]{buf: make([]T, capacity)} }

// push appends v, whose id must be the last id + 1 (or any id when empty).
func (r *ring[T]) push(id int64, v T) {
	if r.n == 0 {
		r.first = id
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
	r.first++
}

func (r *ring[T]) len() int { return r.n }

// after appends to dst the items with an id greater than id, oldest first.
func (r *ring[T]) after(dst []T, id int64) []T {
	skip := 0
	if id >= r.first {
		skip = int(min(id-r.first+1, int64(r.n)))
	}
	for i := skip; i < r.n; i++ {
		dst = append(dst, r.buf[(r.start+i)%len(r.buf)])
	}
	return dst
}

// last returns the newest item.
func (r *ring[T]) last() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}

// tail appends the newest n items to dst, newest first.
func (r *ring[T]) tail(dst []T, n int) []T {
	for i := r.n - 1; i >= 0 && n > 0; i, n = i-1, n-1 {
		dst = append(dst, r.buf[(r.start+i)%len(r.buf)])
	}
	return dst
}
