package pgcatalog

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// Fixed oids: the namespaces, the one role, database and access methods,
// as Postgres numbers them (clients sometimes test for 11 or 2200).
const (
	nsPgCatalog   uint32 = 11
	nsPublic      uint32 = 2200
	nsInfoSchema  uint32 = 13000
	nsPgToast     uint32 = 99
	ownerOID      uint32 = 10
	databaseOID   uint32 = 5
	amHeap        uint32 = 2
	amBtree       uint32 = 403
	pgClassOID    uint32 = 1259
	collDefault   uint32 = 100
	firstUserOID  uint32 = 16384
	userOIDSpace  uint32 = 1<<31 - firstUserOID
	systemRelBase uint32 = 12000
)

// vcol is one column of a virtual relation.
type vcol struct {
	name   string
	typ    uint32
	typmod int32
}

// vrel is a relation this package serves: a catalog relation (its rows
// built from the snapshot) or, in a catalog snapshot, a Sluice source
// (which has columns but no rows here: its rows are the engine's).
type vrel struct {
	schema string
	name   string
	oid    uint32
	kind   byte // pg_class.relkind
	cols   []vcol
	rows   func(c *catalog) [][]any
	// src is the Sluice source this relation is; nil for catalog ones.
	src *Relation
	// pkey is the oid of a TABLE's primary-key index and constraint
	// (0: none).
	pkey uint32
}

// parseCols reads "name type, name type" declarations.
func parseCols(decl string) []vcol {
	var cols []vcol
	for _, part := range strings.Split(decl, ",") {
		f := strings.Fields(part)
		if len(f) < 2 {
			continue
		}
		decl := strings.Join(f[1:], " ")
		oid, ok := lookupTypeName(decl)
		if !ok {
			panic("pgcatalog: unknown column type in declaration: " + part)
		}
		typmod := int32(-1)
		var n int32
		if _, err := fmt.Sscanf(decl, "varchar(%d)", &n); err == nil {
			typmod = n + 4
		}
		cols = append(cols, vcol{f[0], oid, typmod})
	}
	return cols
}

// catalog is one statement's view: the Sluice sources as relations of
// schema public, and the catalog relations over them.
type catalog struct {
	sess      *Session
	user      []*vrel
	byOID     map[uint32]*vrel
	indexName map[uint32]string
}

// stableOID gives the same name the same oid in every query and session,
// in the user oid range; taken keeps oids unique within one snapshot.
func stableOID(key string, taken map[uint32]bool) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	oid := firstUserOID + h.Sum32()%userOIDSpace
	for taken[oid] {
		oid++
		if oid < firstUserOID {
			oid = firstUserOID
		}
	}
	taken[oid] = true
	return oid
}

func newCatalog(s *Session) *catalog {
	c := &catalog{sess: s, byOID: map[uint32]*vrel{}, indexName: map[uint32]string{}}
	for _, r := range systemRels {
		c.byOID[r.oid] = r
	}
	var rels []Relation
	if s.src != nil {
		rels = s.src()
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].Name < rels[j].Name })
	taken := map[uint32]bool{}
	for i := range rels {
		r := &rels[i]
		v := &vrel{schema: "public", name: r.Name, kind: 'r', src: r, oid: stableOID("relation:"+r.Name, taken)}
		for _, col := range r.Columns {
			t := TypeOf(col.Type)
			v.cols = append(v.cols, vcol{col.Name, t.OID, t.TypeMod})
		}
		c.user = append(c.user, v)
		c.byOID[v.oid] = v
	}
	for _, v := range c.user {
		if v.src.Kind == "TABLE" && len(keyAttnums(v.src)) > 0 {
			v.pkey = stableOID("index:"+v.name+"_pkey", taken)
			c.indexName[v.pkey] = v.name + "_pkey"
		}
	}
	return c
}

func keyAttnums(r *Relation) []any {
	var nums []any
	for i, col := range r.Columns {
		if col.Key {
			nums = append(nums, int64(i+1))
		}
	}
	return nums
}

// all lists every relation: the catalog's, then the user's.
func (c *catalog) all() []*vrel {
	out := make([]*vrel, 0, len(systemRels)+len(c.user))
	out = append(out, systemRels...)
	return append(out, c.user...)
}

// lookup finds a relation by schema (empty: the search path, pg_catalog
// then public) and name.
func (c *catalog) lookup(schema, name string) *vrel {
	if schema == "" {
		if r := systemByName["pg_catalog."+name]; r != nil {
			return r
		}
		schema = "public"
	}
	if schema == "public" {
		for _, r := range c.user {
			if r.name == name {
				return r
			}
		}
		return nil
	}
	return systemByName[schema+"."+name]
}

func (c *catalog) namespaceName(oid uint32) string {
	switch oid {
	case nsPgCatalog:
		return "pg_catalog"
	case nsPublic:
		return "public"
	case nsInfoSchema:
		return "information_schema"
	case nsPgToast:
		return "pg_toast"
	}
	return fmt.Sprint(oid)
}

func (c *catalog) namespaceOID(name string) (uint32, bool) { return namespaceOID(name) }

func namespaceOID(name string) (uint32, bool) {
	switch name {
	case "pg_catalog":
		return nsPgCatalog, true
	case "public":
		return nsPublic, true
	case "information_schema":
		return nsInfoSchema, true
	case "pg_toast":
		return nsPgToast, true
	}
	return 0, false
}

// regclassName prints an oid as regclass does: the relation's name,
// schema-qualified when the search path would not find it.
func (c *catalog) regclassName(oid uint32) string {
	if name, ok := c.indexName[oid]; ok {
		return quoteIdent(name)
	}
	r := c.byOID[oid]
	if r == nil {
		return fmt.Sprint(oid)
	}
	if r.schema == "pg_catalog" || r.schema == "public" {
		return quoteIdent(r.name)
	}
	return quoteIdent(r.schema) + "." + quoteIdent(r.name)
}

// regclassOf resolves a relation name as text::regclass does.
func (c *catalog) regclassOf(text string) (any, error) {
	parts := splitQualified(text)
	var r *vrel
	switch len(parts) {
	case 1:
		r = c.lookup("", parts[0])
		if r == nil {
			for oid, name := range c.indexName {
				if name == parts[0] {
					return int64(oid), nil
				}
			}
		}
	case 2:
		r = c.lookup(parts[0], parts[1])
	case 3:
		r = c.lookup(parts[1], parts[2])
	}
	if r == nil {
		return nil, &Error{Code: CodeUndefinedTable, Message: fmt.Sprintf("relation %q does not exist", text)}
	}
	return int64(r.oid), nil
}

// namespaceOf is the namespace oid a relation lives in.
func namespaceOf(r *vrel) uint32 {
	oid, _ := namespaceOID(r.schema)
	return oid
}

// description is pg_description's text for a Sluice source: both kinds
// are relkind 'r' (a client reads either like a table), so this text is
// where a client sees whether the relation is a STREAM or a TABLE.
func description(r *Relation) string {
	return fmt.Sprintf("Sluice %s over topic %s", r.Kind, r.Topic)
}
