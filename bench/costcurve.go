package main

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// costCurveCmd is `bench costcurve`: how the aggregation's cost grows
// with its state — its rate and peak RSS over 100,000, 1,000,000 and
// 5,000,000 keys (one bid per auction, so every bid is a new key), and a
// cold restore of a changelog that size, Sluice beside Kafka Streams and
// a raw consume of the same changelog.
type costCurveCmd struct {
	Keys       []int         `sep:"," default:"100000,1000000,5000000" help:"Key counts of the curve's points."`
	Partitions int32         `default:"2" help:"Partitions of the bids topic."`
	Seed       uint64        `default:"11" help:"Seed of the event generator."`
	Sluice     string        `type:"path" help:"sluice binary (default: built from ../cmd/sluice into a temp dir)."`
	Plot       string        `default:"../docs/costcurve.png" type:"path" help:"Where the plot (PNG) goes."`
	Warmup     time.Duration `default:"2s" help:"Steady-state window, as nexmark's --warmup."`
}

// costPoint is what one key count measured.
type costPoint struct {
	keys                 int
	sluice, kstreams     procSample
	sluiceWhy, ksWhy     string
	raw, restore, ksRest procSample
	restoreWhy, ksRWhy   string
}

func (cc *costCurveCmd) Run(ctx context.Context, c *cli) error {
	if len(cc.Keys) == 0 {
		return errors.New("--keys: give at least one key count")
	}
	env, err := setUp(ctx, "costcurve", &cc.Sluice, c.Brokers)
	if err != nil {
		return err
	}
	defer env.Close()
	tmp, cl := env.tmp, env.cl
	brokers := strings.Join(cl.Seeds, ",")
	fmt.Printf("costcurve: keys %v, %d partitions, broker %s\n", cc.Keys, cc.Partitions, cl.Name)
	fmt.Printf("machine: %s\n", machine())
	ksRun, ksWhy := findKStreams()
	sluiceAgg := func(in, out, id, dir string) *exec.Cmd {
		file := filepath.Join(dir, "q.sql")
		if err := os.WriteFile(file, []byte(sluiceSQL(agg, "exactly_once", in, out, "", false)), 0o644); err != nil {
			return nil
		}
		p := exec.Command(cc.Sluice, "run", file, "--brokers", brokers, "--service-id", id, "--data-dir", filepath.Join(dir, "data"))
		p.Env = append(os.Environ(), "SLUICE_LOG_LEVEL=warn")
		return p
	}
	ksAgg := func(in, out, id, dir string) *exec.Cmd {
		return exec.Command(ksRun, "agg", "--brokers", brokers, "--in", in, "--out", out, "--app-id", id, "--state-dir", filepath.Join(dir, "state"))
	}
	var points []*costPoint
	for i, keys := range cc.Keys {
		pt := &costPoint{keys: keys, ksWhy: ksWhy, ksRWhy: ksWhy}
		points = append(points, pt)
		tag := fmt.Sprintf("cc%x%d", time.Now().UnixNano()&0xffffff, i)
		t0 := time.Now()
		gen, err := generate(ctx, cl.connOpts(), tag, cc.Partitions, keys, cc.Seed, true, nil, nil, nil)
		if err != nil {
			for _, t := range gen.topics {
				deleteTopic(cl.connOpts(), t)
			}
			return fmt.Errorf("generate %d keys: %w", keys, err)
		}
		fmt.Printf("%d keys: %s, %d bids on %d (auction, window) keys, in %s\n", keys, gen.bidsTopic, gen.bids, gen.windowKeys, time.Since(t0).Round(time.Millisecond))
		b := &nexBench{conn: cl.connOpts(), partitions: cc.Partitions, tmp: tmp, in: gen.bidsTopic, bids: gen.bids, warmup: cc.Warmup}
		if pt.sluice, err = b.run(ctx, &contender{name: "S-agg", wl: agg, start: sluiceAgg}, gen.bids); err != nil {
			pt.sluiceWhy = err.Error()
		}
		fmt.Printf("  S-agg %.0f bids/s, peak RSS %.0f MB\n", pt.sluice.Rate(), rssMB(pt.sluice))
		if ksWhy == "" {
			if pt.kstreams, err = b.run(ctx, &contender{name: "KS-agg", wl: agg, start: ksAgg}, gen.bids); err != nil {
				pt.ksWhy = err.Error()
			}
			fmt.Printf("  KS-agg %.0f bids/s, peak RSS %.0f MB\n", pt.kstreams.Rate(), rssMB(pt.kstreams))
		}
		for _, t := range gen.topics {
			deleteTopic(cl.connOpts(), t)
		}
		// The restore rows of nexmark, one timed round at this size.
		n := &nexmarkCmd{Keys: keys, Runs: 1}
		rows, err := n.restore(ctx, c, cl, tmp, ksRun, ksWhy, "", "not measured on the cost curve")
		if err != nil {
			pt.restoreWhy = err.Error()
		} else {
			pick := func(r *restoreRow) (procSample, string) {
				if r.unavailable != "" || len(r.samples) == 0 {
					return procSample{}, r.unavailable
				}
				return r.samples[0], ""
			}
			pt.raw, _ = pick(rows[0])
			pt.restore, pt.restoreWhy = pick(rows[1])
			pt.ksRest, pt.ksRWhy = pick(rows[2])
			fmt.Printf("  restore: raw %.0f rec/s, S %.0f rec/s, KS %.0f rec/s\n", pt.raw.Rate(), pt.restore.Rate(), pt.ksRest.Rate())
		}
	}
	entries := printCostCurve(points)
	if err := plotCostCurve(cc.Plot, points); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Printf("\nwrote %s\n", cc.Plot)
	if c.Quick {
		fmt.Printf("%s left alone (--quick)\n", c.Results)
		return nil
	}
	if err := mergeResults(c.Results, entries); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	fmt.Printf("wrote %s\n", c.Results)
	return nil
}

// printCostCurve prints the table and returns the C1–C3 entries, from
// the first and last points.
func printCostCurve(points []*costPoint) map[string]result {
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "keys\tS agg bids/s\tS peak RSS MB\tKS agg bids/s\tKS peak RSS MB\traw consume rec/s\tS cold restore rec/s\tS restore s\tKS restore rec/s\tKS restore s\t")
	for _, p := range points {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.keys,
			orWhy(p.sluice.Rate(), p.sluiceWhy), orWhy(rssMB(p.sluice), p.sluiceWhy),
			orWhy(p.kstreams.Rate(), p.ksWhy), orWhy(rssMB(p.kstreams), p.ksWhy),
			orWhy(p.raw.Rate(), p.restoreWhy), orWhy(p.restore.Rate(), p.restoreWhy), orWhy(p.restore.Wall.Seconds(), p.restoreWhy),
			orWhy(p.ksRest.Rate(), p.ksRWhy), orWhy(p.ksRest.Wall.Seconds(), p.ksRWhy))
	}
	_ = tw.Flush()
	for _, p := range points {
		for _, why := range []string{p.sluiceWhy, p.ksWhy, p.restoreWhy, p.ksRWhy} {
			if why != "" {
				fmt.Printf("  %d keys: %s\n", p.keys, why)
			}
		}
	}
	entries := map[string]result{}
	if len(points) < 2 {
		return entries
	}
	first, last := points[0], points[len(points)-1]
	if first.sluiceWhy == "" && last.sluiceWhy == "" && first.sluice.Rate() > 0 {
		entries["C1"] = result{Value: round3(last.sluice.Rate() / first.sluice.Rate()), Target: 0.6}
		entries["C2"] = result{Value: round3(rssMB(last.sluice)), Target: 1000}
	}
	if last.restoreWhy == "" && last.raw.Rate() > 0 {
		entries["C3"] = result{Value: round3(last.restore.Rate() / last.raw.Rate()), Target: 0.5}
	}
	fmt.Printf("\nC1 agg rate at %d keys / at %d keys, Sluice: %.2f (target >= 0.6)\n", last.keys, first.keys, entries["C1"].Value)
	fmt.Printf("C2 agg peak RSS at %d keys, Sluice: %.0f MB (target <= 1000)\n", last.keys, entries["C2"].Value)
	fmt.Printf("C3 cold restore of %d keys / raw consume: %.2f (target >= 0.5)\n", last.keys, entries["C3"].Value)
	return entries
}

func orWhy(v float64, why string) string {
	if why != "" || v == 0 {
		return "–"
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// plotCostCurve draws three panels against the key count (log scale):
// aggregation rate, peak RSS, and restore rate, Sluice beside Kafka
// Streams (and the raw consume for the restore).
func plotCostCurve(path string, points []*costPoint) error {
	type series struct {
		name  string
		value func(p *costPoint) (float64, bool)
		color color.Color
	}
	sluiceBlue, ksOrange, rawGrey := color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255}, color.RGBA{R: 127, G: 127, B: 127, A: 255}
	panels := []struct {
		title, unit string
		series      []series
	}{
		{"aggregation rate", "bids/s", []series{
			{"Sluice", func(p *costPoint) (float64, bool) { return p.sluice.Rate(), p.sluiceWhy == "" }, sluiceBlue},
			{"Kafka Streams", func(p *costPoint) (float64, bool) { return p.kstreams.Rate(), p.ksWhy == "" }, ksOrange},
		}},
		{"aggregation peak RSS", "MB", []series{
			{"Sluice", func(p *costPoint) (float64, bool) { return rssMB(p.sluice), p.sluiceWhy == "" }, sluiceBlue},
			{"Kafka Streams", func(p *costPoint) (float64, bool) { return rssMB(p.kstreams), p.ksWhy == "" }, ksOrange},
		}},
		{"cold restore", "records/s", []series{
			{"Sluice", func(p *costPoint) (float64, bool) { return p.restore.Rate(), p.restoreWhy == "" }, sluiceBlue},
			{"Kafka Streams", func(p *costPoint) (float64, bool) { return p.ksRest.Rate(), p.ksRWhy == "" }, ksOrange},
			{"raw consume", func(p *costPoint) (float64, bool) { return p.raw.Rate(), p.restoreWhy == "" }, rawGrey},
		}},
	}
	width, height := 6*vg.Inch, 3*vg.Inch
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "keys"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = pn.unit
		p.Legend.Top = true
		for _, s := range pn.series {
			var xys plotter.XYs
			for _, pt := range points {
				if v, ok := s.value(pt); ok && v > 0 {
					xys = append(xys, plotter.XY{X: float64(pt.keys), Y: v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			line, marks, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			line.Color, marks.Color = s.color, s.color
			p.Add(line, marks)
			p.Legend.Add(s.name, line, marks)
		}
		plots[i] = []*plot.Plot{p}
	}
	img := vgimg.New(width, height*vg.Length(len(panels)))
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, draw.New(img))
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
