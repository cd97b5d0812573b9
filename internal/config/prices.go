package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ModelPrice is a model's price in US dollars per million tokens.
type ModelPrice struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// pricesAccepted is ACU_MODEL_PRICES's format.
const pricesAccepted = "comma-separated MODEL=IN:OUT entries, in US dollars per million input and output tokens " +
	"(e.g. anthropic/claude-sonnet-4.5=3:15,qwen2.5vl:7b=0:0)"

func init() {
	settings = append(settings, safety(Setting{
		Env: "ACU_MODEL_PRICES", Accepted: pricesAccepted,
		Help: "prices of models acu does not know, or overrides of its own, for cost figures and cost limits " +
			"(a model that has none, on an endpoint that reports no cost, costs \"unknown\"; a cost limit then refuses to start)",
		set: func(c *Config, v string) error {
			p, err := ParseModelPrices(v)
			if err != nil {
				return err
			}
			c.ModelPrices = p
			return nil
		},
		get: func(c *Config) string { return FormatModelPrices(c.ModelPrices) },
	}))
}

// ParseModelPrices parses ACU_MODEL_PRICES: MODEL=IN:OUT entries separated
// by commas, prices in US dollars per million tokens. Model names may hold
// "/" and ":" (the price is after the last "=").
func ParseModelPrices(v string) (map[string]ModelPrice, error) {
	out := map[string]ModelPrice{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndexByte(entry, '=')
		if i <= 0 {
			return nil, fmt.Errorf("entry %q: want MODEL=IN:OUT", entry)
		}
		model, price := strings.TrimSpace(entry[:i]), strings.TrimSpace(entry[i+1:])
		in, outp, ok := strings.Cut(price, ":")
		if !ok {
			return nil, fmt.Errorf("entry %q: price %q: want IN:OUT, two numbers", entry, price)
		}
		pIn, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		pOut, err2 := strconv.ParseFloat(strings.TrimSpace(outp), 64)
		if err1 != nil || err2 != nil || pIn < 0 || pOut < 0 || pIn > 1e6 || pOut > 1e6 {
			return nil, fmt.Errorf("entry %q: prices must be numbers from 0 to 1000000", entry)
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("model %q: priced twice", model)
		}
		out[model] = ModelPrice{InputPerMTok: pIn, OutputPerMTok: pOut}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// FormatModelPrices is the inverse of ParseModelPrices, sorted by model.
func FormatModelPrices(p map[string]ModelPrice) string {
	names := make([]string, 0, len(p))
	for m := range p {
		names = append(names, m)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = m + "=" + strconv.FormatFloat(p[m].InputPerMTok, 'g', -1, 64) + ":" + strconv.FormatFloat(p[m].OutputPerMTok, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
