package actions

import (
	"crypto/rand"
	"encoding/base32"
	"image"
	"sync"
	"time"
)

// maxShots is how many screenshots' geometry the registry keeps.
const maxShots = 512

// ShotGeometry maps a screenshot's pixels back to the screen: the image
// (W x H) shows Region (screen pixels) of Display.
type ShotGeometry struct {
	Display string
	Region  image.Rectangle
	W, H    int
	At      time.Time
}

// ToScreen maps pixel (x, y) of the image to the screen pixel it shows.
func (g ShotGeometry) ToScreen(x, y int) image.Point {
	sx := g.Region.Min.X + (2*x+1)*g.Region.Dx()/(2*g.W)
	sy := g.Region.Min.Y + (2*y+1)*g.Region.Dy()/(2*g.H)
	return image.Pt(min(sx, g.Region.Max.X-1), min(sy, g.Region.Max.Y-1))
}

// Shots remembers the geometry of the last screenshots acu returned, by id,
// so a model that read coordinates off one can act on them. It is safe
// for concurrent use.
type Shots struct {
	mu    sync.Mutex
	byID  map[string]ShotGeometry
	order []string
}

// NewShots returns an empty registry.
func NewShots() *Shots { return &Shots{byID: make(map[string]ShotGeometry)} }

var shotEnc = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Remember records g and returns its new id ("shot_…").
func (s *Shots) Remember(g ShotGeometry) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	id := "shot_" + shotEnc.EncodeToString(b[:])[:12]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[id] = g
	s.order = append(s.order, id)
	if len(s.order) > maxShots {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
	return id
}

// Lookup returns the geometry of screenshot id.
func (s *Shots) Lookup(id string) (ShotGeometry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.byID[id]
	return g, ok
}
