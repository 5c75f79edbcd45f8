package streaming

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/openrath/rath/tool"
)

// cities are the places distance_km knows: latitude and longitude in
// degrees.
var cities = map[string][2]float64{
	"lisbon": {38.7223, -9.1393},
	"madrid": {40.4168, -3.7038},
	"paris":  {48.8566, 2.3522},
	"berlin": {52.5200, 13.4050},
	"rome":   {41.9028, 12.4964},
}

// DistanceArgs are distance_km's arguments.
type DistanceArgs struct {
	From string `json:"from" jsonschema:"a city: Lisbon, Madrid, Paris, Berlin or Rome"`
	To   string `json:"to" jsonschema:"another of those cities"`
}

// Distance returns the distance_km tool: the great-circle distance between
// two cities, in whole kilometres.
func Distance() tool.Tool {
	t, err := tool.FuncWith("distance_km", "The distance between two cities as the crow flies, in kilometres.",
		func(_ context.Context, _ tool.Env, a DistanceArgs) (string, error) {
			from, ok1 := cities[strings.ToLower(a.From)]
			to, ok2 := cities[strings.ToLower(a.To)]
			if !ok1 || !ok2 {
				return "", fmt.Errorf("unknown city in %q → %q; known: %s", a.From, a.To, strings.Join(slices.Sorted(maps.Keys(cities)), ", "))
			}
			return fmt.Sprintf("%s to %s: %.0f km", a.From, a.To, haversine(from, to)), nil
		},
		tool.Idempotent[DistanceArgs]())
	if err != nil {
		panic(err) // DistanceArgs is a plain struct
	}
	return t
}

// haversine is the great-circle distance in km on a sphere of the Earth's
// mean radius.
func haversine(a, b [2]float64) float64 {
	const r = 6371.0088
	rad := math.Pi / 180
	dlat, dlon := (b[0]-a[0])*rad, (b[1]-a[1])*rad
	h := math.Pow(math.Sin(dlat/2), 2) + math.Cos(a[0]*rad)*math.Cos(b[0]*rad)*math.Pow(math.Sin(dlon/2), 2)
	return 2 * r * math.Asin(math.Sqrt(h))
}
