package smartwait

import (
	"container/list"
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/acu-dev/acu/internal/judge"
)

// verdictCache remembers verdicts by (criteria, content hash) and joins
// concurrent judgements of the same key: the same condition on the same
// pixels (or text) is judged once across jobs. Errors and unparsed replies
// (empty, refusal, garbage) are shared with the callers in flight but never
// cached: only a real YES or NO is an answer worth remembering.
type verdictCache struct {
	mu       sync.Mutex
	size     int
	order    *list.List // front = most recent; values are *cacheEntry
	entries  map[string]*list.Element
	inflight map[string]*call
}

type cacheEntry struct {
	key string
	v   judge.Verdict
}

type call struct {
	done chan struct{}
	v    judge.Verdict
	err  error
}

func newVerdictCache(size int) *verdictCache {
	return &verdictCache{
		size:     size,
		order:    list.New(),
		entries:  make(map[string]*list.Element),
		inflight: make(map[string]*call),
	}
}

func cacheKey(q judge.Question, hash uint64) string {
	kind := "f"
	if q.Frame == nil {
		kind = "t"
	}
	return kind + strconv.FormatUint(hash, 16) + "\x00" + q.Condition
}

// lookup returns a cached verdict, or the in-flight call to wait on, or
// registers a new call that the caller must run (leader).
func (c *verdictCache) lookup(key string) (v judge.Verdict, hit bool, cl *call, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry).v, true, nil, false
	}
	if cl, ok := c.inflight[key]; ok {
		return judge.Verdict{}, false, cl, false
	}
	cl = &call{done: make(chan struct{})}
	c.inflight[key] = cl
	return judge.Verdict{}, false, cl, true
}

func (c *verdictCache) complete(key string, cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
	if cl.err == nil && !cl.v.Unparsed {
		if el, ok := c.entries[key]; ok {
			el.Value.(*cacheEntry).v = cl.v
			c.order.MoveToFront(el)
		} else {
			c.entries[key] = c.order.PushFront(&cacheEntry{key: key, v: cl.v})
			for c.order.Len() > c.size {
				old := c.order.Back()
				c.order.Remove(old)
				delete(c.entries, old.Value.(*cacheEntry).key)
			}
		}
	}
	close(cl.done)
}

// judgeShared judges q once per (criteria, hash) across jobs. The judge call
// itself runs under runCtx (Run's context, plus JudgeTimeout) so one job's
// cancellation does not fail the other jobs sharing it; the caller stops
// waiting when waitCtx ends. deduped reports a verdict this caller did not
// pay for (cache hit or another job's call).
//
// release gives back the caller's judge slot: when the call is done if
// this caller makes it, at once if it joins another's call or hits the
// cache.
func (e *Engine) judgeShared(runCtx, waitCtx context.Context, q judge.Question, hash uint64, release func()) (judge.Verdict, bool, error) {
	key := cacheKey(q, hash)
	v, hit, cl, leader := e.cache.lookup(key)
	if !leader {
		release()
	}
	if hit {
		e.metrics.deduped.Inc()
		return v, true, nil
	}
	if leader {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			defer release()
			jctx, cancel := context.WithTimeout(runCtx, e.opts.JudgeTimeout)
			defer cancel()
			defer func() {
				// A panic in a judge must not kill the daemon or leave the
				// waiters of this call waiting: it completes as an error.
				if r := recover(); r != nil {
					cl.err = fmt.Errorf("judge: recovered panic: %v", r)
					e.metrics.judgeErrors.Inc()
					e.log.Error("judge panicked", "err", cl.err)
					e.cache.complete(key, cl)
				}
			}()
			e.metrics.judgeCalls.Inc()
			cl.v, cl.err = e.opts.Judge.Judge(jctx, q)
			if cl.err != nil {
				e.metrics.judgeErrors.Inc()
			}
			e.cache.complete(key, cl)
		}()
	}
	select {
	case <-cl.done:
	case <-waitCtx.Done():
		return judge.Verdict{}, false, waitCtx.Err()
	}
	if !leader && cl.err == nil {
		e.metrics.deduped.Inc()
	}
	return cl.v, !leader, cl.err
}

// textHash hashes a pane's text (FNV-1a 64) the way frames are hashed:
// equal hashes mean equal content.
func textHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// judgeSlot waits for a judge slot (Options.JudgeConcurrency) and returns
// its release, which may be called more than once.
func (e *Engine) judgeSlot(ctx context.Context) (release func(), err error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-e.slots }) }, nil
}
