package main

// udfDirFlag is --udf-dir, which server, run, shell and test share: a
// directory of user-defined functions loaded at start (engine.Config.UDFDir).
type udfDirFlag struct {
	UDFDir string `name:"udf-dir" env:"SLUICE_UDF_DIR" type:"existingdir" placeholder:"DIR" help:"Load the user-defined functions of this directory at start: its functions.sql holds CREATE [TABLE] FUNCTION statements whose PATHs are relative to DIR. They exist on this instance only (not in the command topic); statements cannot redefine or drop them."`
}
