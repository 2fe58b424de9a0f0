package pgcatalog

import (
	"fmt"
	"sort"
)

// sysDecl declares a catalog relation: its columns and how its rows come
// from a snapshot (nil: always empty, as for the things Sluice has none of).
type sysDecl struct {
	schema, name string
	kind         byte
	oid          uint32
	cols         string
	rows         func(c *catalog, cols []vcol) [][]any
}

// fillView makes a row of a view from the values given by column name;
// the others are NULL, as information_schema's are.
func fillView(cols []vcol, kv map[string]any) []any {
	row := make([]any, len(cols))
	for i, col := range cols {
		if v, ok := kv[col.name]; ok {
			row[i] = fill([]vcol{col}, map[string]any{col.name: v})[0]
		}
	}
	return row
}

// fill makes a row from the values given by column name; the others get
// the value an absent thing has in Postgres's catalogs: 0 for numbers and
// oids, false, "" for "char", NULL for text, arrays and expressions.
func fill(cols []vcol, kv map[string]any) []any {
	row := make([]any, len(cols))
	for i, col := range cols {
		if v, ok := kv[col.name]; ok {
			if n, isInt := v.(int); isInt {
				v = int64(n)
			}
			if n, isOID := v.(uint32); isOID {
				v = int64(n)
			}
			row[i] = v
			continue
		}
		switch col.typ {
		case OIDOid, OIDInt2, OIDInt4, OIDInt8, OIDRegproc, OIDXid, OIDRegclass, OIDRegtype:
			row[i] = int64(0)
		case OIDFloat4, OIDFloat8:
			row[i] = float64(0)
		case OIDBool:
			row[i] = false
		case OIDChar:
			row[i] = ""
		}
	}
	return row
}

var sysDecls = []sysDecl{
	{"pg_catalog", "pg_namespace", 'r', 2615, "oid oid, nspname name, nspowner oid, nspacl aclitem[]", rowsNamespace},
	{"pg_catalog", "pg_class", 'r', 1259, "oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2, relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool, relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool, relrewrite oid, relfrozenxid xid, relminmxid xid, relacl aclitem[], reloptions text[], relpartbound pg_node_tree", rowsClass},
	{"pg_catalog", "pg_attribute", 'r', 1249, "attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, attnum int2, attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char, attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char, attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl aclitem[], attoptions text[], attfdwoptions text[], attmissingval text[]", rowsAttribute},
	{"pg_catalog", "pg_type", 'r', 1247, "oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc, typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char, typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin pg_node_tree, typdefault text, typacl aclitem[]", rowsType},
	{"pg_catalog", "pg_database", 'r', 1262, "oid oid, datname name, datdba oid, encoding int4, datlocprovider char, datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid, dattablespace oid, datcollate text, datctype text, daticulocale text, datcollversion text, datacl aclitem[]", rowsDatabase},
	{"pg_catalog", "pg_settings", 'v', 0, "name text, setting text, unit text, category text, short_desc text, extra_desc text, context text, vartype text, source text, min_val text, max_val text, enumvals text[], boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool", rowsSettings},
	{"pg_catalog", "pg_roles", 'v', 0, "rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamptz, rolbypassrls bool, rolconfig text[], oid oid", rowsRoles},
	{"pg_catalog", "pg_user", 'v', 0, "usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, usebypassrls bool, passwd text, valuntil timestamptz, useconfig text[]", rowsUser},
	{"pg_catalog", "pg_auth_members", 'r', 1261, "roleid oid, member oid, grantor oid, admin_option bool", nil},
	{"pg_catalog", "pg_am", 'r', 2601, "oid oid, amname name, amhandler regproc, amtype char", rowsAm},
	{"pg_catalog", "pg_description", 'r', 2609, "objoid oid, classoid oid, objsubid int4, description text", rowsDescription},
	{"pg_catalog", "pg_shdescription", 'r', 2396, "objoid oid, classoid oid, description text", nil},
	{"pg_catalog", "pg_index", 'r', 2610, "indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool, indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector, indcollation oidvector, indclass oidvector, indoption int2vector, indexprs pg_node_tree, indpred pg_node_tree", rowsIndex},
	{"pg_catalog", "pg_constraint", 'r', 2606, "oid oid, conname name, connamespace oid, contype char, condeferrable bool, condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid, confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, connoinherit bool, conkey int2[], confkey int2[], conpfeqop oid[], conppeqop oid[], conffeqop oid[], confdelsetcols int2[], conexclop oid[], conbin pg_node_tree", rowsConstraint},
	{"pg_catalog", "pg_attrdef", 'r', 2604, "oid oid, adrelid oid, adnum int2, adbin pg_node_tree", nil},
	{"pg_catalog", "pg_inherits", 'r', 2611, "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool", nil},
	{"pg_catalog", "pg_depend", 'r', 2608, "classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid, refobjsubid int4, deptype char", nil},
	{"pg_catalog", "pg_proc", 'r', 1255, "oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, proleakproof bool, proisstrict bool, proretset bool, provolatile char, proparallel char, pronargs int2, pronargdefaults int2, prorettype oid, proargtypes oidvector, proallargtypes oid[], proargmodes char[], proargnames text[], proargdefaults pg_node_tree, protrftypes oid[], prosrc text, probin text, prosqlbody pg_node_tree, proconfig text[], proacl aclitem[]", rowsProc},
	{"pg_catalog", "pg_trigger", 'r', 2620, "oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, tgenabled char, tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool, tginitdeferred bool, tgnargs int2, tgattr int2vector, tgargs bytea, tgqual pg_node_tree, tgoldtable name, tgnewtable name", nil},
	{"pg_catalog", "pg_rewrite", 'r', 2618, "oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char, is_instead bool, ev_qual pg_node_tree, ev_action pg_node_tree", nil},
	{"pg_catalog", "pg_policy", 'r', 3256, "oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles oid[], polqual pg_node_tree, polwithcheck pg_node_tree", nil},
	{"pg_catalog", "pg_statistic_ext", 'r', 3381, "oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, stxstattarget int4, stxkeys int2vector, stxkind char[], stxexprs pg_node_tree", nil},
	{"pg_catalog", "pg_publication", 'r', 6104, "oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool", nil},
	{"pg_catalog", "pg_publication_rel", 'r', 6106, "oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2vector", nil},
	{"pg_catalog", "pg_publication_namespace", 'r', 6237, "oid oid, pnpubid oid, pnnspid oid", nil},
	{"pg_catalog", "pg_partitioned_table", 'r', 3350, "partrelid oid, partstrat char, partnatts int2, partdefid oid, partattrs int2vector, partclass oidvector, partcollation oidvector, partexprs pg_node_tree", nil},
	{"pg_catalog", "pg_foreign_table", 'r', 3118, "ftrelid oid, ftserver oid, ftoptions text[]", nil},
	{"pg_catalog", "pg_foreign_server", 'r', 1417, "oid oid, srvname name, srvowner oid, srvfdw oid, srvtype text, srvversion text, srvacl aclitem[], srvoptions text[]", nil},
	{"pg_catalog", "pg_collation", 'r', 3456, "oid oid, collname name, collnamespace oid, collowner oid, collprovider char, collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text, collversion text", rowsCollation},
	{"pg_catalog", "pg_tablespace", 'r', 1213, "oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]", rowsTablespace},
	{"pg_catalog", "pg_extension", 'r', 3079, "oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, extversion text, extconfig oid[], extcondition text[]", nil},
	{"pg_catalog", "pg_enum", 'r', 3501, "oid oid, enumtypid oid, enumsortorder float4, enumlabel name", nil},
	{"pg_catalog", "pg_range", 'r', 3541, "rngtypid oid, rngsubtype oid, rngmultitypid oid, rngcollation oid, rngsubopc oid, rngcanonical regproc, rngsubdiff regproc", nil},
	{"pg_catalog", "pg_sequence", 'r', 2224, "seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, seqmin int8, seqcache int8, seqcycle bool", nil},
	{"pg_catalog", "pg_event_trigger", 'r', 3466, "oid oid, evtname name, evtevent name, evtowner oid, evtfoid oid, evtenabled char, evttags text[]", nil},
	{"pg_catalog", "pg_language", 'r', 2612, "oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool, lanplcallfoid oid, laninline oid, lanvalidator oid, lanacl aclitem[]", nil},
	{"pg_catalog", "pg_matviews", 'v', 0, "schemaname name, matviewname name, matviewowner name, tablespace name, hasindexes bool, ispopulated bool, definition text", nil},
	{"pg_catalog", "pg_tables", 'v', 0, "schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool, hasrules bool, hastriggers bool, rowsecurity bool", rowsTables},
	{"pg_catalog", "pg_views", 'v', 0, "schemaname name, viewname name, viewowner name, definition text", rowsViews},
	{"pg_catalog", "pg_indexes", 'v', 0, "schemaname name, tablename name, indexname name, tablespace name, indexdef text", rowsIndexes},
	{"pg_catalog", "pg_stat_user_tables", 'v', 0, "relid oid, schemaname name, relname name, seq_scan int8, seq_tup_read int8, idx_scan int8, idx_tup_fetch int8, n_tup_ins int8, n_tup_upd int8, n_tup_del int8, n_live_tup int8, n_dead_tup int8, last_vacuum timestamptz, last_analyze timestamptz", rowsStatUserTables},
	{"pg_catalog", "pg_stat_activity", 'v', 0, "datid oid, datname name, pid int4, usesysid oid, usename name, application_name text, client_addr text, client_port int4, backend_start timestamptz, state text, query text", nil},
	{"information_schema", "tables", 'v', 0, "table_catalog name, table_schema name, table_name name, table_type varchar, self_referencing_column_name name, reference_generation varchar, user_defined_type_catalog name, user_defined_type_schema name, user_defined_type_name name, is_insertable_into varchar(3), is_typed varchar(3), commit_action varchar", rowsISTables},
	{"information_schema", "columns", 'v', 0, "table_catalog name, table_schema name, table_name name, column_name name, ordinal_position int4, column_default varchar, is_nullable varchar(3), data_type varchar, character_maximum_length int4, character_octet_length int4, numeric_precision int4, numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, interval_type varchar, interval_precision int4, character_set_catalog name, character_set_schema name, character_set_name name, collation_catalog name, collation_schema name, collation_name name, domain_catalog name, domain_schema name, domain_name name, udt_catalog name, udt_schema name, udt_name name, scope_catalog name, scope_schema name, scope_name name, maximum_cardinality int4, dtd_identifier name, is_self_referencing varchar(3), is_identity varchar(3), identity_generation varchar, identity_start varchar, identity_increment varchar, identity_maximum varchar, identity_minimum varchar, identity_cycle varchar(3), is_generated varchar, generation_expression varchar, is_updatable varchar(3)", rowsISColumns},
	{"information_schema", "schemata", 'v', 0, "catalog_name name, schema_name name, schema_owner name, default_character_set_catalog name, default_character_set_schema name, default_character_set_name name, sql_path varchar", rowsISSchemata},
	{"information_schema", "views", 'v', 0, "table_catalog name, table_schema name, table_name name, view_definition varchar, check_option varchar, is_updatable varchar(3), is_insertable_into varchar(3), is_trigger_updatable varchar(3), is_trigger_deletable varchar(3), is_trigger_insertable_into varchar(3)", rowsISViews},
	{"information_schema", "table_constraints", 'v', 0, "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, table_schema name, table_name name, constraint_type varchar, is_deferrable varchar(3), initially_deferred varchar(3), enforced varchar(3), nulls_distinct varchar(3)", rowsISTableConstraints},
	{"information_schema", "key_column_usage", 'v', 0, "constraint_catalog name, constraint_schema name, constraint_name name, table_catalog name, table_schema name, table_name name, column_name name, ordinal_position int4, position_in_unique_constraint int4", rowsISKeyColumnUsage},
	{"information_schema", "routines", 'v', 0, "specific_catalog name, specific_schema name, specific_name name, routine_catalog name, routine_schema name, routine_name name, routine_type varchar, data_type varchar", nil},
}

// systemRels are sysDecls as relations; systemByName finds them by
// "schema.name".
var (
	systemRels   []*vrel
	systemByName map[string]*vrel
)

func init() {
	var rels []*vrel
	byName := map[string]*vrel{}
	next := systemRelBase
	for _, d := range sysDecls {
		d := d
		oid := d.oid
		if oid == 0 {
			oid = next
			next++
		}
		cols := parseCols(d.cols)
		r := &vrel{schema: d.schema, name: d.name, oid: oid, kind: d.kind, cols: cols}
		if d.rows != nil {
			r.rows = func(c *catalog) [][]any { return d.rows(c, cols) }
		}
		rels = append(rels, r)
		byName[d.schema+"."+d.name] = r
	}
	systemRels, systemByName = rels, byName
}

func rowsNamespace(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, ns := range []uint32{nsPgCatalog, nsPublic, nsInfoSchema, nsPgToast} {
		rows = append(rows, fill(cols, map[string]any{"oid": ns, "nspname": c.namespaceName(ns), "nspowner": ownerOID}))
	}
	return rows
}

func rowsClass(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		am := amHeap
		if r.kind == 'v' {
			am = 0
		}
		rows = append(rows, fill(cols, map[string]any{
			"oid": r.oid, "relname": r.name, "relnamespace": namespaceOf(r), "relowner": ownerOID,
			"relam": am, "relfilenode": r.oid, "reltuples": float64(-1), "relhasindex": r.pkey != 0,
			"relpersistence": "p", "relkind": string(r.kind), "relnatts": len(r.cols),
			"relispopulated": true, "relreplident": "d",
		}))
		if r.pkey != 0 {
			rows = append(rows, fill(cols, map[string]any{
				"oid": r.pkey, "relname": c.indexName[r.pkey], "relnamespace": nsPublic, "relowner": ownerOID,
				"relam": amBtree, "relfilenode": r.pkey, "reltuples": float64(0), "relpersistence": "p",
				"relkind": "i", "relnatts": len(keyAttnums(r.src)), "relispopulated": true, "relreplident": "n",
			}))
		}
	}
	return rows
}

// attributeRow is one pg_attribute row of relation oid.
func attributeRow(cols []vcol, rel uint32, num int, name string, typ PGType, notNull bool) []any {
	t := pgTypes[typ.OID]
	align, storage := "i", "x"
	byval := false
	coll := uint32(0)
	if t != nil {
		align = string(t.align)
		byval = t.size > 0 && t.size <= 8
		storage = storageOf(t)
		coll = collationOf(t)
	}
	return fill(cols, map[string]any{
		"attrelid": rel, "attname": name, "atttypid": typ.OID, "attstattarget": -1, "attlen": int(typ.Size),
		"attnum": num, "attcacheoff": -1, "atttypmod": int(typ.TypeMod), "attbyval": byval, "attalign": align,
		"attstorage": storage, "attnotnull": notNull, "attislocal": true, "attcollation": coll,
		"attndims": map[bool]int{true: 1, false: 0}[isArrayType(typ.OID) && typ.OID != OIDInt2Vector && typ.OID != OIDOidVector],
	})
}

func rowsAttribute(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		for i, col := range r.cols {
			typ := fieldType(col.typ, -1)
			notNull := false
			if r.src != nil {
				typ = TypeOf(r.src.Columns[i].Type)
				notNull = r.pkey != 0 && r.src.Columns[i].Key
			}
			rows = append(rows, attributeRow(cols, r.oid, i+1, col.name, typ, notNull))
		}
		if r.pkey != 0 {
			n := 0
			for _, col := range r.src.Columns {
				if col.Key {
					n++
					rows = append(rows, attributeRow(cols, r.pkey, n, col.Name, TypeOf(col.Type), false))
				}
			}
		}
	}
	return rows
}

func rowsType(c *catalog, cols []vcol) [][]any {
	oids := make([]uint32, 0, len(pgTypes))
	for oid := range pgTypes {
		oids = append(oids, oid)
	}
	sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
	var rows [][]any
	for _, oid := range oids {
		t := pgTypes[oid]
		coll := collationOf(t)
		rows = append(rows, fill(cols, map[string]any{
			"oid": oid, "typname": t.name, "typnamespace": nsPgCatalog, "typowner": ownerOID, "typlen": int(t.size),
			"typbyval": t.size > 0 && t.size <= 8, "typtype": string(t.kind), "typcategory": string(t.category),
			"typisdefined": true, "typdelim": ",", "typelem": t.elem, "typarray": t.array, "typalign": string(t.align),
			"typstorage": storageOf(t), "typtypmod": -1, "typcollation": coll,
		}))
	}
	return rows
}

func rowsDatabase(c *catalog, cols []vcol) [][]any {
	return [][]any{fill(cols, map[string]any{
		"oid": databaseOID, "datname": c.sess.database, "datdba": ownerOID, "encoding": 6, "datlocprovider": "c",
		"datallowconn": true, "datconnlimit": -1, "dattablespace": 1663, "datcollate": "C.UTF-8", "datctype": "C.UTF-8",
	})}
}

func rowsSettings(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, g := range gucs {
		v := c.sess.setting(g.name)
		rows = append(rows, fill(cols, map[string]any{
			"name": g.name, "setting": v, "category": g.category, "short_desc": g.desc, "context": g.context,
			"vartype": g.vartype, "source": "default", "boot_val": g.def, "reset_val": g.def, "pending_restart": false,
		}))
	}
	return rows
}

func rowsRoles(c *catalog, cols []vcol) [][]any {
	return [][]any{fill(cols, map[string]any{
		"rolname": c.sess.user, "rolinherit": true, "rolcanlogin": true, "rolconnlimit": -1,
		"rolpassword": "********", "oid": ownerOID,
	})}
}

func rowsUser(c *catalog, cols []vcol) [][]any {
	return [][]any{fill(cols, map[string]any{"usename": c.sess.user, "usesysid": ownerOID, "passwd": "********"})}
}

func rowsAm(c *catalog, cols []vcol) [][]any {
	return [][]any{
		fill(cols, map[string]any{"oid": amHeap, "amname": "heap", "amtype": "t"}),
		fill(cols, map[string]any{"oid": amBtree, "amname": "btree", "amtype": "i"}),
	}
}

func rowsDescription(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		rows = append(rows, fill(cols, map[string]any{"objoid": r.oid, "classoid": pgClassOID, "objsubid": 0, "description": description(r.src)}))
	}
	return rows
}

func rowsIndex(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		if r.pkey == 0 {
			continue
		}
		keys := keyAttnums(r.src)
		zeros := make([]any, len(keys))
		for i := range zeros {
			zeros[i] = int64(0)
		}
		rows = append(rows, fill(cols, map[string]any{
			"indexrelid": r.pkey, "indrelid": r.oid, "indnatts": len(keys), "indnkeyatts": len(keys),
			"indisunique": true, "indisprimary": true, "indimmediate": true, "indisvalid": true,
			"indisready": true, "indislive": true, "indkey": keys, "indcollation": zeros, "indclass": zeros, "indoption": zeros,
		}))
	}
	return rows
}

func rowsConstraint(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		if r.pkey == 0 {
			continue
		}
		rows = append(rows, fill(cols, map[string]any{
			"oid": r.pkey, "conname": c.indexName[r.pkey], "connamespace": nsPublic, "contype": "p",
			"convalidated": true, "conrelid": r.oid, "conindid": r.pkey, "confupdtype": " ", "confdeltype": " ",
			"confmatchtype": " ", "conislocal": true, "connoinherit": true, "conkey": keyAttnums(r.src),
		}))
	}
	return rows
}

func rowsProc(c *catalog, cols []vcol) [][]any {
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	for name := range aggregates {
		names = append(names, name)
	}
	sort.Strings(names)
	var rows [][]any
	for i, name := range names {
		kind := "f"
		if _, ok := aggregates[name]; ok {
			kind = "a"
		}
		rows = append(rows, fill(cols, map[string]any{
			"oid": 14000 + i, "proname": name, "pronamespace": nsPgCatalog, "proowner": ownerOID, "prolang": 12,
			"procost": float64(1), "prokind": kind, "provolatile": "s", "proparallel": "s", "proargtypes": []any{},
		}))
	}
	return rows
}

func rowsCollation(c *catalog, cols []vcol) [][]any {
	return [][]any{
		fill(cols, map[string]any{"oid": collDefault, "collname": "default", "collnamespace": nsPgCatalog, "collowner": ownerOID, "collprovider": "d", "collisdeterministic": true, "collencoding": -1}),
		fill(cols, map[string]any{"oid": 950, "collname": "C", "collnamespace": nsPgCatalog, "collowner": ownerOID, "collprovider": "c", "collisdeterministic": true, "collencoding": -1, "collcollate": "C", "collctype": "C"}),
		fill(cols, map[string]any{"oid": 951, "collname": "POSIX", "collnamespace": nsPgCatalog, "collowner": ownerOID, "collprovider": "c", "collisdeterministic": true, "collencoding": -1, "collcollate": "POSIX", "collctype": "POSIX"}),
	}
}

func rowsTablespace(c *catalog, cols []vcol) [][]any {
	return [][]any{
		fill(cols, map[string]any{"oid": 1663, "spcname": "pg_default", "spcowner": ownerOID}),
		fill(cols, map[string]any{"oid": 1664, "spcname": "pg_global", "spcowner": ownerOID}),
	}
}

func rowsTables(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		if r.kind == 'r' {
			rows = append(rows, fill(cols, map[string]any{"schemaname": r.schema, "tablename": r.name, "tableowner": c.sess.user, "hasindexes": r.pkey != 0}))
		}
	}
	return rows
}

func rowsViews(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		if r.kind == 'v' {
			rows = append(rows, fill(cols, map[string]any{"schemaname": r.schema, "viewname": r.name, "viewowner": c.sess.user}))
		}
	}
	return rows
}

func rowsIndexes(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		if r.pkey != 0 {
			rows = append(rows, fill(cols, map[string]any{"schemaname": "public", "tablename": r.name, "indexname": c.indexName[r.pkey], "indexdef": c.indexDef(r, false)}))
		}
	}
	return rows
}

// indexDef is pg_get_indexdef of a TABLE's primary-key index; pretty
// leaves the table's schema out, as Postgres does.
func (c *catalog) indexDef(r *vrel, pretty bool) string {
	table := "public." + quoteIdent(r.name)
	if pretty {
		table = quoteIdent(r.name)
	}
	return fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s USING btree (%s)", quoteIdent(c.indexName[r.pkey]), table, keyColumnList(r))
}

func keyColumnList(r *vrel) string {
	s := ""
	for _, col := range r.src.Columns {
		if col.Key {
			if s != "" {
				s += ", "
			}
			s += quoteIdent(col.Name)
		}
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func rowsISTables(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		typ := "BASE TABLE"
		if r.kind == 'v' {
			typ = "VIEW"
		}
		rows = append(rows, fillView(cols, map[string]any{
			"table_catalog": c.sess.database, "table_schema": r.schema, "table_name": r.name, "table_type": typ,
			"is_insertable_into": yesNo(r.src != nil), "is_typed": "NO",
		}))
	}
	return rows
}

// columnFacts are information_schema.columns' type columns of one column.
func columnFacts(typ PGType) map[string]any {
	m := map[string]any{"udt_name": typeName(typ.OID)}
	dataType := formatType(typ.OID, -1)
	if isArrayType(typ.OID) && typ.OID != OIDInt2Vector && typ.OID != OIDOidVector {
		dataType = "ARRAY"
	}
	m["data_type"] = dataType
	bits := map[uint32]int{OIDInt2: 16, OIDInt4: 32, OIDInt8: 64, OIDFloat4: 24, OIDFloat8: 53}
	if b, ok := bits[typ.OID]; ok {
		m["numeric_precision"] = b
		m["numeric_precision_radix"] = 2
		if typ.OID != OIDFloat4 && typ.OID != OIDFloat8 {
			m["numeric_scale"] = 0
		}
	}
	if typ.OID == OIDNumeric {
		m["numeric_precision_radix"] = 10
		if typ.TypeMod >= 4 {
			mod := typ.TypeMod - 4
			m["numeric_precision"] = int(mod >> 16 & 0xffff)
			m["numeric_scale"] = int(mod & 0xffff)
		}
	}
	switch typ.OID {
	case OIDDate:
		m["datetime_precision"] = 0
	case OIDTime, OIDTimestamp, OIDTimestamptz:
		m["datetime_precision"] = 6
	case OIDText, OIDVarchar, OIDBpchar:
		m["character_octet_length"] = 1073741824
	}
	return m
}

func rowsISColumns(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		for i, col := range r.cols {
			typ := fieldType(col.typ, -1)
			notNull := false
			if r.src != nil {
				typ = TypeOf(r.src.Columns[i].Type)
				notNull = r.pkey != 0 && r.src.Columns[i].Key
			}
			kv := columnFacts(typ)
			for k, v := range map[string]any{
				"table_catalog": c.sess.database, "table_schema": r.schema, "table_name": r.name, "column_name": col.name,
				"ordinal_position": i + 1, "is_nullable": yesNo(!notNull), "udt_catalog": c.sess.database,
				"udt_schema": "pg_catalog", "dtd_identifier": fmt.Sprint(i + 1), "is_self_referencing": "NO",
				"is_identity": "NO", "identity_cycle": "NO", "is_generated": "NEVER", "is_updatable": yesNo(r.src != nil),
			} {
				kv[k] = v
			}
			rows = append(rows, fillView(cols, kv))
		}
	}
	return rows
}

func rowsISSchemata(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, ns := range []string{"pg_catalog", "public", "information_schema", "pg_toast"} {
		rows = append(rows, fillView(cols, map[string]any{"catalog_name": c.sess.database, "schema_name": ns, "schema_owner": c.sess.user}))
	}
	return rows
}

func rowsISViews(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.all() {
		if r.kind == 'v' {
			rows = append(rows, fillView(cols, map[string]any{
				"table_catalog": c.sess.database, "table_schema": r.schema, "table_name": r.name, "check_option": "NONE",
				"is_updatable": "NO", "is_insertable_into": "NO", "is_trigger_updatable": "NO", "is_trigger_deletable": "NO",
				"is_trigger_insertable_into": "NO",
			}))
		}
	}
	return rows
}

func rowsISTableConstraints(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		if r.pkey == 0 {
			continue
		}
		common := func(kv map[string]any) map[string]any {
			for k, v := range map[string]any{
				"constraint_catalog": c.sess.database, "constraint_schema": "public", "table_catalog": c.sess.database,
				"table_schema": "public", "table_name": r.name, "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES",
			} {
				kv[k] = v
			}
			return kv
		}
		rows = append(rows, fillView(cols, common(map[string]any{"constraint_name": c.indexName[r.pkey], "constraint_type": "PRIMARY KEY"})))
		// Postgres lists each NOT NULL column as a CHECK constraint too.
		for i, col := range r.src.Columns {
			if col.Key {
				name := fmt.Sprintf("%d_%d_%d_not_null", nsPublic, r.oid, i+1)
				rows = append(rows, fillView(cols, common(map[string]any{"constraint_name": name, "constraint_type": "CHECK"})))
			}
		}
	}
	return rows
}

func rowsISKeyColumnUsage(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		if r.pkey == 0 {
			continue
		}
		n := 0
		for _, col := range r.src.Columns {
			if !col.Key {
				continue
			}
			n++
			rows = append(rows, fillView(cols, map[string]any{
				"constraint_catalog": c.sess.database, "constraint_schema": "public", "constraint_name": c.indexName[r.pkey],
				"table_catalog": c.sess.database, "table_schema": "public", "table_name": r.name, "column_name": col.Name,
				"ordinal_position": n,
			}))
		}
	}
	return rows
}

// rowsStatUserTables has a row per Sluice source with zero counts: the
// rows live in Kafka and state stores, which this catalog does not count.
func rowsStatUserTables(c *catalog, cols []vcol) [][]any {
	var rows [][]any
	for _, r := range c.user {
		rows = append(rows, fill(cols, map[string]any{"relid": r.oid, "schemaname": "public", "relname": r.name}))
	}
	return rows
}

// storageOf is typstorage: plain for fixed-width types, main for numeric,
// extended for the other variable-width ones.
func storageOf(t *pgType) string {
	switch {
	case t.size > 0 || t.size == -2:
		return "p"
	case t.oid == OIDNumeric:
		return "m"
	}
	return "x"
}

// collationOf is the collation of a type's values: the default one for
// text types and arrays of them, C for name.
func collationOf(t *pgType) uint32 {
	if t.elem != 0 && t.category == 'A' {
		if e := pgTypes[t.elem]; e != nil && e.oid != OIDName && e.category == 'S' {
			return collDefault
		}
		if t.elem == OIDName {
			return 950
		}
		return 0
	}
	switch {
	case t.oid == OIDName:
		return 950
	case t.category == 'S':
		return collDefault
	}
	return 0
}
