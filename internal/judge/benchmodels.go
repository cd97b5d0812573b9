package judge

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// PrintModels prints one line per report (one backend and model each, run
// over the same set): accuracy, recall, false YES, unparsed replies and
// errors, latency and cost, so models can be compared at a glance.
func PrintModels(w io.Writer, rs []Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tmodel\tcases\taccuracy\trecall\tfalse YES\tunparsed\terrors\tp50\tp90\tcost total\tcost per call")
	for _, r := range rs {
		model := r.Model
		if model == "" {
			model = "-"
		}
		total, per := fmt.Sprintf("$%.6f", r.CostUSD), fmt.Sprintf("$%.6f", r.CostUSD/float64(max(1, r.N)))
		if r.Unpriced > 0 {
			total, per = fmt.Sprintf("unknown (%d of %d calls unpriced)", r.Unpriced, r.N), "unknown"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%d (%.1f%%)\t%d\t%d\t%s\t%s\t%s\t%s\n",
			r.Backend, model, r.N, 100*r.Accuracy, 100*r.Recall, r.FalseYes, 100*r.FalseYesRate,
			r.Unparsed, r.Errors, ms(r.P50), ms(r.P90), total, per)
	}
	return tw.Flush()
}

// Sample returns at most n cases of set spread evenly over it (every
// app, size and theme of an ordered set keeps its share), in order; n <= 0
// or n >= len(set) returns set.
func Sample(set []Case, n int) []Case {
	if n <= 0 || n >= len(set) {
		return set
	}
	out := make([]Case, 0, n)
	for i := range n {
		out = append(out, set[i*len(set)/n])
	}
	return out
}
