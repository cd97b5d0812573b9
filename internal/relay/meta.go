package relay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// imageFields are the sense event's objects whose "data" member carries an
// image (base64): the region of interest and the diff. GET
// /sense?meta_only=true leaves them out, as the origin relay does for
// sinain-hud's bridge.
var imageFields = map[string]bool{"roi": true, "diff": true}

// metaOnly reports whether a GET asks for events without image data
// (?meta_only=true, the origin relay's flag; 1 and the other spellings
// strconv.ParseBool accepts count too, anything else is false, as there).
func metaOnly(req *http.Request) bool {
	v, err := strconv.ParseBool(req.URL.Query().Get("meta_only"))
	return err == nil && v
}

// metaView returns the events as served with ?meta_only=true.
func metaView(evs []SenseEvent) []SenseEvent {
	out := make([]SenseEvent, len(evs))
	for i, ev := range evs {
		if ev.meta != nil {
			ev.raw = ev.meta
		}
		out[i] = ev
	}
	return out
}

// stripImages returns obj without roi.data and diff.data, keeping every
// other member in its order; nil when there is nothing to strip.
func stripImages(obj []byte) json.RawMessage {
	if !bytes.Contains(obj, []byte(`"data"`)) {
		return nil
	}
	stripped := false
	out, ok := rewriteObject(obj, func(key string, val json.RawMessage) (json.RawMessage, bool) {
		if !imageFields[key] {
			return val, true
		}
		inner, ok := rewriteObject(val, func(k string, v json.RawMessage) (json.RawMessage, bool) {
			if k == "data" {
				stripped = true
				return nil, false
			}
			return v, true
		})
		if !ok {
			return val, true // not an object: left as sent
		}
		return inner, true
	})
	if !ok || !stripped {
		return nil
	}
	return out
}

// rewriteObject walks the members of the JSON object obj in order; f
// returns each member's new value, or keep=false to drop it. ok is false
// when obj is not an object.
func rewriteObject(obj []byte, f func(key string, val json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	b := make([]byte, 0, len(obj))
	b = append(b, '{')
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		nv, keep := f(key, val)
		if !keep {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(key)
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, nv...)
		n++
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return append(b, '}'), true
}
