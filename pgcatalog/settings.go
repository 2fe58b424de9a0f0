package pgcatalog

import (
	"fmt"
	"sort"
	"strings"
)

// ServerVersion is the Postgres version Sluice's front door speaks as:
// version(), SHOW server_version and the startup ParameterStatus agree.
const (
	ServerVersion    = "15.0"
	ServerVersionNum = "150000"
)

// guc declares one Postgres run-time parameter a session can SHOW and
// SET. report marks the GUC_REPORT ones, whose changes the server sends
// the client as ParameterStatus.
type guc struct {
	name     string
	def      string
	vartype  string
	context  string
	category string
	desc     string
	report   bool
	readOnly bool
}

var gucs = []guc{
	{name: "application_name", def: "", vartype: "string", context: "user", category: "Reporting and Logging", desc: "Sets the application name to be reported in statistics and logs.", report: true},
	{name: "block_size", def: "8192", vartype: "integer", context: "internal", category: "Preset Options", desc: "Shows the size of a disk block.", readOnly: true},
	{name: "bytea_output", def: "hex", vartype: "enum", context: "user", category: "Client Connection Defaults", desc: "Sets the output format for bytea."},
	{name: "client_encoding", def: "UTF8", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the client's character set encoding.", report: true},
	{name: "client_min_messages", def: "notice", vartype: "enum", context: "user", category: "Client Connection Defaults", desc: "Sets the message levels that are sent to the client."},
	{name: "DateStyle", def: "ISO, MDY", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the display format for date and time values.", report: true},
	{name: "default_transaction_isolation", def: "read committed", vartype: "enum", context: "user", category: "Client Connection Defaults", desc: "Sets the transaction isolation level of each new transaction."},
	{name: "default_transaction_read_only", def: "off", vartype: "bool", context: "user", category: "Client Connection Defaults", desc: "Sets the default read-only status of new transactions.", report: true},
	{name: "extra_float_digits", def: "1", vartype: "integer", context: "user", category: "Client Connection Defaults", desc: "Sets the number of digits displayed for floating-point values."},
	{name: "geqo", def: "on", vartype: "bool", context: "user", category: "Query Tuning", desc: "Enables genetic query optimization."},
	{name: "idle_in_transaction_session_timeout", def: "0", vartype: "integer", context: "user", category: "Client Connection Defaults", desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
	{name: "in_hot_standby", def: "off", vartype: "bool", context: "internal", category: "Preset Options", desc: "Shows whether hot standby is currently active.", report: true, readOnly: true},
	{name: "integer_datetimes", def: "on", vartype: "bool", context: "internal", category: "Preset Options", desc: "Shows whether datetimes are integer based.", report: true, readOnly: true},
	{name: "IntervalStyle", def: "postgres", vartype: "enum", context: "user", category: "Client Connection Defaults", desc: "Sets the display format for interval values.", report: true},
	{name: "is_superuser", def: "off", vartype: "bool", context: "internal", category: "Preset Options", desc: "Shows whether the current user is a superuser.", report: true, readOnly: true},
	{name: "jit", def: "off", vartype: "bool", context: "user", category: "Query Tuning", desc: "Allow JIT compilation."},
	{name: "lc_collate", def: "C.UTF-8", vartype: "string", context: "internal", category: "Preset Options", desc: "Shows the collation order locale.", readOnly: true},
	{name: "lc_ctype", def: "C.UTF-8", vartype: "string", context: "internal", category: "Preset Options", desc: "Shows the character classification and case conversion locale.", readOnly: true},
	{name: "lc_messages", def: "C.UTF-8", vartype: "string", context: "superuser", category: "Client Connection Defaults", desc: "Sets the language in which messages are displayed."},
	{name: "lc_monetary", def: "C.UTF-8", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the locale for formatting monetary amounts."},
	{name: "lc_numeric", def: "C.UTF-8", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the locale for formatting numbers."},
	{name: "lc_time", def: "C.UTF-8", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the locale for formatting date and time values."},
	{name: "lock_timeout", def: "0", vartype: "integer", context: "user", category: "Client Connection Defaults", desc: "Sets the maximum allowed duration of any wait for a lock."},
	{name: "max_connections", def: "100", vartype: "integer", context: "postmaster", category: "Connections and Authentication", desc: "Sets the maximum number of concurrent connections.", readOnly: true},
	{name: "max_identifier_length", def: "63", vartype: "integer", context: "internal", category: "Preset Options", desc: "Shows the maximum identifier length.", readOnly: true},
	{name: "max_index_keys", def: "32", vartype: "integer", context: "internal", category: "Preset Options", desc: "Shows the maximum number of index keys.", readOnly: true},
	{name: "row_security", def: "on", vartype: "bool", context: "user", category: "Client Connection Defaults", desc: "Enable row security."},
	{name: "search_path", def: `"$user", public`, vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the schema search order for names that are not schema-qualified."},
	{name: "server_encoding", def: "UTF8", vartype: "string", context: "internal", category: "Preset Options", desc: "Shows the server (database) character set encoding.", report: true, readOnly: true},
	{name: "server_version", def: ServerVersion, vartype: "string", context: "internal", category: "Preset Options", desc: "Shows the server version.", report: true, readOnly: true},
	{name: "server_version_num", def: ServerVersionNum, vartype: "integer", context: "internal", category: "Preset Options", desc: "Shows the server version as an integer.", readOnly: true},
	{name: "session_authorization", def: "", vartype: "string", context: "user", category: "Preset Options", desc: "Sets the session user name.", report: true, readOnly: true},
	{name: "standard_conforming_strings", def: "on", vartype: "bool", context: "user", category: "Version and Platform Compatibility", desc: "Causes '...' strings to treat backslashes literally.", report: true},
	{name: "statement_timeout", def: "0", vartype: "integer", context: "user", category: "Client Connection Defaults", desc: "Sets the maximum allowed duration of any statement."},
	{name: "synchronous_commit", def: "on", vartype: "enum", context: "user", category: "Write-Ahead Log", desc: "Sets the current transaction's synchronization level."},
	{name: "TimeZone", def: "UTC", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Sets the time zone for displaying and interpreting time stamps.", report: true},
	{name: "timezone_abbreviations", def: "Default", vartype: "string", context: "user", category: "Client Connection Defaults", desc: "Selects a file of time zone abbreviations."},
	{name: "transaction_isolation", def: "read committed", vartype: "enum", context: "user", category: "Client Connection Defaults", desc: "Sets the current transaction's isolation level."},
	{name: "transaction_read_only", def: "off", vartype: "bool", context: "user", category: "Client Connection Defaults", desc: "Sets the current transaction's read-only status."},
	{name: "work_mem", def: "4MB", vartype: "integer", context: "user", category: "Resource Usage", desc: "Sets the maximum memory to be used for query workspaces."},
}

var gucByName = func() map[string]*guc {
	m := map[string]*guc{}
	for i := range gucs {
		m[strings.ToLower(gucs[i].name)] = &gucs[i]
	}
	return m
}()

// canonicalSetting is a parameter's declared name, or for a custom
// ("prefix.name") one the lower-cased name; ok false for an unknown one.
func canonicalSetting(name string) (string, bool) {
	lower := strings.ToLower(name)
	if g := gucByName[lower]; g != nil {
		return g.name, true
	}
	if strings.Contains(lower, ".") {
		return lower, true
	}
	return "", false
}

// setting is a parameter's value in this session.
func (s *Session) setting(name string) string {
	if v, ok := s.settings[name]; ok {
		return v
	}
	switch name {
	case "session_authorization":
		return s.user
	}
	if g := gucByName[strings.ToLower(name)]; g != nil {
		return g.def
	}
	return ""
}

// set changes a parameter, noting a reported one as changed.
func (s *Session) set(name, value string) {
	if s.settings == nil {
		s.settings = map[string]string{}
	}
	old := s.setting(name)
	s.settings[name] = value
	if g := gucByName[strings.ToLower(name)]; g != nil && g.report && old != value {
		if s.changed == nil {
			s.changed = map[string]string{}
		}
		s.changed[name] = value
	}
}

func (s *Session) reset(name string) {
	if g := gucByName[strings.ToLower(name)]; g != nil {
		s.set(name, g.def)
		if name == "session_authorization" {
			s.set(name, s.user)
		}
	}
	delete(s.settings, name)
}

// Reported are the GUC_REPORT parameters and their values now: what a
// server sends as ParameterStatus after authentication.
func (s *Session) Reported() map[string]string {
	m := map[string]string{}
	for _, g := range gucs {
		if g.report {
			m[g.name] = s.setting(g.name)
		}
	}
	if s.settings != nil {
		if v, ok := s.settings["application_name"]; ok {
			m["application_name"] = v
		}
	}
	return m
}

// Changed returns the GUC_REPORT parameters a statement changed since the
// last call (SET application_name, SET TimeZone, RESET ALL, ...), each to
// be sent as a ParameterStatus before ReadyForQuery; nil when none.
func (s *Session) Changed() map[string]string {
	c := s.changed
	s.changed = nil
	return c
}

// SetStartupParameter applies a parameter from the startup packet
// (application_name, client_encoding, DateStyle, ...); unknown names are
// ignored as they are options for the server, not settings.
func (s *Session) SetStartupParameter(name, value string) error {
	canon, ok := canonicalSetting(name)
	if !ok {
		return nil
	}
	v, err := s.normalizeSetting(canon, value)
	if err != nil {
		return err
	}
	s.set(canon, v)
	s.changed = nil
	return nil
}

// normalizeSetting checks a new value and writes it as Postgres shows it:
// DateStyle "ISO" is "ISO, MDY" (the order kept from before), the names
// of UTF-8 are UTF8; Sluice speaks UTF-8 only.
func (s *Session) normalizeSetting(name, value string) (string, error) {
	invalid := &Error{Code: CodeInvalidParameter, Message: fmt.Sprintf("invalid value for parameter %q: %q", name, value)}
	switch name {
	case "client_encoding":
		switch strings.ToUpper(strings.NewReplacer("-", "", "_", "").Replace(value)) {
		case "UTF8", "UNICODE":
			return "UTF8", nil
		}
		return "", &Error{Code: CodeFeatureUnsupported, Message: fmt.Sprintf("client_encoding %q is not supported: Sluice speaks UTF8", value)}
	case "DateStyle":
		cur := strings.Split(s.setting("DateStyle"), ", ")
		style, order := cur[0], cur[1]
		for _, part := range strings.Split(value, ",") {
			switch p := strings.ToUpper(strings.TrimSpace(part)); p {
			case "ISO":
				style = "ISO"
			case "POSTGRES":
				style = "Postgres"
			case "SQL":
				style = "SQL"
			case "GERMAN":
				style = "German"
			case "DMY", "EURO", "EUROPEAN":
				order = "DMY"
			case "MDY", "US", "NONEURO", "NONEUROPEAN":
				order = "MDY"
			case "YMD":
				order = "YMD"
			case "DEFAULT", "":
			default:
				return "", invalid
			}
		}
		return style + ", " + order, nil
	}
	if g := gucByName[strings.ToLower(name)]; g != nil && g.vartype == "bool" {
		b, err := parseBool(value)
		if err != nil {
			return "", invalid
		}
		return map[bool]string{true: "on", false: "off"}[b], nil
	}
	return value, nil
}

func sortedSettingNames(s *Session) []string {
	names := make([]string, 0, len(gucs))
	for _, g := range gucs {
		names = append(names, g.name)
	}
	for name := range s.settings {
		if _, known := gucByName[strings.ToLower(name)]; !known {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	return names
}
