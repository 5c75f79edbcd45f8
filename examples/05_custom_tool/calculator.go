package customtool

import (
	"context"
	"fmt"
	"math"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// InterestArgs are the calculator's arguments; the tool's schema is
// inferred from this type.
type InterestArgs struct {
	Principal   float64 `json:"principal" jsonschema:"the amount invested, in dollars, as a number"`
	RatePercent float64 `json:"rate_percent" jsonschema:"the yearly interest rate in percent, e.g. 4.5"`
	Years       int     `json:"years" jsonschema:"how many whole years the money stays invested"`
	// CompoundsPerYear is optional (omitempty): 0 means once a year.
	CompoundsPerYear int `json:"compounds_per_year,omitempty" jsonschema:"how many times a year interest is added: 1 (default), 4, 12 or 365"`
}

// InterestResult is what the calculator returns (as JSON).
type InterestResult struct {
	FinalAmount float64 `json:"final_amount"`
	Interest    float64 `json:"interest"`
}

// Calculator returns the compound_interest tool.
func Calculator() tool.Tool {
	return tool.MustFunc("compound_interest",
		"Compute what an amount grows to at a yearly interest rate compounded n times a year, and the interest earned.",
		compound)
}

func compound(_ context.Context, a InterestArgs) (InterestResult, error) {
	n := a.CompoundsPerYear
	if n == 0 {
		n = 1
	}
	switch {
	case a.Principal <= 0:
		return InterestResult{}, invalid("principal must be positive, got %v", a.Principal)
	case a.RatePercent <= -100 || a.RatePercent > 100:
		return InterestResult{}, invalid("rate_percent must be above -100 and at most 100, got %v", a.RatePercent)
	case a.Years < 1 || a.Years > 200:
		return InterestResult{}, invalid("years must be between 1 and 200, got %d", a.Years)
	case n < 0 || n > 365:
		return InterestResult{}, invalid("compounds_per_year must be between 1 and 365, got %d", n)
	}
	final := a.Principal * math.Pow(1+a.RatePercent/100/float64(n), float64(n*a.Years))
	return InterestResult{FinalAmount: cents(final), Interest: cents(final - a.Principal)}, nil
}

func invalid(format string, args ...any) error {
	return tool.Errorf(session.ToolErrInvalidArgs, nil, fmt.Sprintf(format, args...))
}

func cents(x float64) float64 { return math.Round(x*100) / 100 }
