package expr

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// GEO_DISTANCE(lat1, lon1, lat2, lon2[, unit]) is the great-circle
// (haversine) distance between two points given in degrees, in
// kilometres, or in miles with unit 'MI' / 'MILES' (a NULL unit is
// kilometres). Degrees become radians as x / 180 * π, the way ksqlDB's
// results were computed, so the last digits agree.
func init() {
	register(&scalar{name: "GEO_DISTANCE", doc: "The great-circle distance between two points (latitude, longitude in degrees), in km or, with 'MI', in miles.",
		bind: bindGeoDistance})
}

const (
	earthRadiusKm = 6371.0
	earthRadiusMi = 3959.0
)

func bindGeoDistance(args []types.Type) (types.Type, func([]any) any, error) {
	if err := argCount("GEO_DISTANCE", args, 4, 5); err != nil {
		return types.Type{}, nil, err
	}
	if err := numCheck("GEO_DISTANCE", args[:4]); err != nil {
		return types.Type{}, nil, err
	}
	if len(args) == 5 && args[4].Kind != types.String && args[4].Kind != types.Unknown {
		return types.Type{}, nil, fmt.Errorf("%w: GEO_DISTANCE's unit must be a STRING ('KM' or 'MI'), got %s", ErrType, args[4])
	}
	return types.DoubleType, func(a []any) any {
		var deg [4]float64
		for i := range deg {
			f, ok := types.AsFloat(a[i])
			if !ok {
				return nil
			}
			deg[i] = f
		}
		radius := earthRadiusKm
		if len(a) == 5 && a[4] != nil {
			switch unit, _ := a[4].(string); strings.ToUpper(strings.TrimSpace(unit)) {
			case "KM", "KILOMETERS", "KILOMETRES":
			case "MI", "MILES":
				radius = earthRadiusMi
			default:
				return nil
			}
		}
		return geoDistance(deg[0], deg[1], deg[2], deg[3], radius)
	}, nil
}

func geoDistance(lat1, lon1, lat2, lon2, radius float64) float64 {
	rad := func(d float64) float64 { return d / 180 * math.Pi }
	dLat, dLon := rad(lat2-lat1), rad(lon2-lon1)
	h := math.Pow(math.Sin(dLat/2), 2) + math.Pow(math.Sin(dLon/2), 2)*math.Cos(rad(lat1))*math.Cos(rad(lat2))
	return 2 * math.Asin(math.Sqrt(h)) * radius
}
