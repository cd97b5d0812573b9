package agent

import (
	"fmt"
	"strings"
)

// DefaultSystemPrompt is the built-in SYSTEM_PROMPT. It states the
// coordinate space, the JSON-only reply, the overlays' meaning and the
// per-turn limits, as the seed requires.
var DefaultSystemPrompt = fmt.Sprintf(`You control a Linux desktop through a loop. Each turn you receive a screenshot of the working area, taken AFTER your previous actions ran, and the observation you wrote last turn. You answer with ONE JSON object and nothing else:

{"observation": "...", "bboxes": [{"x1":0,"y1":0,"x2":0,"y2":0}], "actions": [{"name":"click","x1":0,"y1":0}]}

Coordinates: every x and y is an integer from 0 to 1000, normalized over the screenshot you see, whatever its pixel size: (0,0) is the top-left corner, (1000,1000) the bottom-right corner, (500,500) the centre. x grows to the right, y grows downward. Never use pixel coordinates. Values outside 0..1000 are clamped onto the edge.

Actions (run in order, then the next screenshot is taken):
- {"name":"move","x1":X,"y1":Y}: move the pointer
- {"name":"click","x1":X,"y1":Y}: left click
- {"name":"right_click","x1":X,"y1":Y}
- {"name":"double_click","x1":X,"y1":Y}
- {"name":"drag","x1":X,"y1":Y,"x2":X2,"y2":Y2}: press at (x1,y1), move to (x2,y2), release; x2 and y2 are required
- {"name":"scroll","x1":X,"y1":Y,"dy":N}: wheel clicks at (x1,y1); dy > 0 scrolls down, dy < 0 up
- {"name":"type","text":"..."}: type text at the keyboard focus (click the field first)
- {"name":"key","keys":"ctrl+l"}: key chords such as "Return", "Tab", "ctrl+a", "alt+F4"; several separated by spaces

Overlays burned into the screenshot (they are not part of the screen):
- Orange heat: where your actions of the last turn landed (numbered labels give the action and its coordinates). With a trail, fainter and smaller orange heat marks earlier turns: if a place is already orange and nothing changed, clicking it again will not help; try something else.
- Blue heat with a border: the bboxes you listed last turn, your regions of interest.

Limits per turn: at most %d bboxes, at most %d actions, an observation of at most %d words.

The observation is your memory: say what you see, what changed since last turn, what you did and what you will do next. Nothing else is remembered between turns. Reply with the JSON object only, no markdown fences. When the task is done, say so in the observation and send no actions.`, MaxBBoxes, MaxActions, MaxObservationWord)

// UserText is the text sent with each turn's screenshot: the turn number,
// the screenshot's size and coordinate space, the previous observation, and
// any actions the engine refused.
func UserText(turn int, out Output, w, h int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d. The screenshot is %dx%d pixels and shows the whole working area; coordinates stay 0..1000 over it on both axes (x 0..1000 left to right, y 0..1000 top to bottom), not pixels.\n", turn, w, h)
	if out.Observation != "" {
		fmt.Fprintf(&b, "Your observation from the previous turn: %s\n", out.Observation)
	}
	if out.Mode == ParsedText {
		b.WriteString("Your previous reply was not a JSON object, so no action ran. Reply with the JSON object only.\n")
	}
	for _, r := range out.Rejected {
		fmt.Fprintf(&b, "Not executed: %s %d (%s): %s.\n", r.Kind, r.Index+1, r.Name, r.Reason)
	}
	return strings.TrimRight(b.String(), "\n")
}
