package expr

import (
	"math"
	"testing"
)

func TestGeoDistance(t *testing.T) {
	cases := []struct {
		lat1, lon1, lat2, lon2, radius, want float64
	}{
		{37.4439, -122.1663, 51.5257, -0.1122, earthRadiusKm, 8634.659796579544}, // Palo Alto to London
		{37.4439, -122.1663, 51.5257, -0.1122, earthRadiusMi, 5365.659729188262},
		{39.18660374, -76.73262144, 39.18660374, -76.73222145, earthRadiusKm, 0.03447366811448324},
		{10, 20, 10, 20, earthRadiusKm, 0},
	}
	for _, tc := range cases {
		// Within 4 ulps: Go's math and Java's differ in the last bits of
		// SIN, COS and ASIN.
		if got := geoDistance(tc.lat1, tc.lon1, tc.lat2, tc.lon2, tc.radius); math.Abs(got-tc.want) > 4*0x1p-52*tc.want {
			t.Errorf("geoDistance(%v, %v, %v, %v, %v) = %v, want %v", tc.lat1, tc.lon1, tc.lat2, tc.lon2, tc.radius, got, tc.want)
		}
	}
}
