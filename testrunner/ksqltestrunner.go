package testrunner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type runnerInputs struct {
	Inputs []rawRecord `json:"inputs"`
}

type runnerOutputs struct {
	Outputs []rawRecord `json:"outputs"`
}

// LoadRunnerCase reads a case in the format of ksqlDB's ksql-test-runner
// tool (`ksql-test-runner -s STATEMENTS.sql -i IN.json -o OUT.json`):
// a plain SQL file, {"inputs": [records]} and {"outputs": [records]}.
//
// The whole SQL text becomes the single entry of Statements: the engine
// splits it into statements with our parser. The case is named after the
// statements file; inputs without a timestamp get 0.
func LoadRunnerCase(statementsPath, inputPath, outputPath string) (*Case, error) {
	sql, err := os.ReadFile(statementsPath)
	if err != nil {
		return nil, err
	}
	var in runnerInputs
	if err := loadJSONFile(inputPath, &in); err != nil {
		return nil, err
	}
	var out runnerOutputs
	if err := loadJSONFile(outputPath, &out); err != nil {
		return nil, err
	}
	c := &Case{
		Name:       strings.TrimSuffix(filepath.Base(statementsPath), filepath.Ext(statementsPath)),
		Statements: []string{string(sql)},
	}
	if c.Inputs, err = toRecords(in.Inputs, true); err != nil {
		return nil, fmt.Errorf("%s: %w", inputPath, err)
	}
	if c.Outputs, err = toRecords(out.Outputs, false); err != nil {
		return nil, fmt.Errorf("%s: %w", outputPath, err)
	}
	c.Skip = skipReason(nil, "", c.Statements)
	return c, nil
}

func loadJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := decodeStrict(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
