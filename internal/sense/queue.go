package sense

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Event is one sense event in the seed's shape.
type Event struct {
	Type string `json:"type"` // "text", "visual" or "context"
	TS   int64  `json:"ts"`   // unix milliseconds
	OCR  string `json:"ocr"`
	Meta Meta   `json:"meta"`
}

// Meta is the event's metadata.
type Meta struct {
	App  string   `json:"app"`
	SSIM *float64 `json:"ssim,omitempty"`
}

// queue is a bounded FIFO of events: when full, the oldest is dropped.
type queue struct {
	mu      sync.Mutex
	items   []Event
	max     int
	dropped int64
	ready   chan struct{}
}

func newQueue(n int) *queue { return &queue{max: n, ready: make(chan struct{}, 1)} }

func (q *queue) push(e Event) {
	q.mu.Lock()
	if len(q.items) >= q.max {
		copy(q.items, q.items[1:])
		q.items = q.items[:len(q.items)-1]
		q.dropped++
	}
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) peek() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return Event{}, false
	}
	return q.items[0], true
}

// pop removes the head if it is still e's slot (a push onto a full queue
// may have dropped it meanwhile).
func (q *queue) pop(ts int64, typ string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) > 0 && q.items[0].TS == ts && q.items[0].Type == typ {
		q.items = q.items[1:]
	}
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// sender posts queued events to the relay in order, retrying with backoff
// while the relay is down or failing; an event the relay refuses as invalid
// (4xx other than 408/429) is dropped.
func (c *Client) sender(ctx context.Context) {
	delay := c.opts.RetryBase
	for {
		e, ok := c.q.peek()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-c.q.ready:
				continue
			}
		}
		retry, err := c.post(ctx, e)
		switch {
		case err == nil:
			c.q.pop(e.TS, e.Type)
			c.mu.Lock()
			c.stats.Sent++
			c.mu.Unlock()
			delay = c.opts.RetryBase
			continue
		case !retry:
			c.q.pop(e.TS, e.Type)
			c.mu.Lock()
			c.stats.Refused++
			c.mu.Unlock()
			c.log.Warn("relay refused a sense event; dropped", "type", e.Type, "err", err)
			continue
		}
		c.mu.Lock()
		c.stats.Retries++
		c.mu.Unlock()
		c.log.Debug("relay unreachable; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, c.opts.RetryMax)
	}
}

// post sends one event; retry says whether a failure is worth retrying.
func (c *Client) post(ctx context.Context, e Event) (retry bool, err error) {
	body, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.opts.Token.Set() {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token.Reveal())
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return true, fmt.Errorf("post sense event to %s: %w", c.url, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("post sense event to %s: %s", c.url, resp.Status)
	default:
		return false, fmt.Errorf("post sense event to %s: %s: %s", c.url, resp.Status, bytes.TrimSpace(msg))
	}
}
