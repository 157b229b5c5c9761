package ast

import "clink/sql/types"

// Statement is a top-level SQL statement.
type Statement interface {
	Node
	stmtNode()
}

// ColumnDef is one column of a CREATE TABLE.
type ColumnDef struct {
	At   Pos
	Name string
	Type types.Type
	// Metadata is the key of a METADATA [FROM 'key'] column (the column
	// name when FROM is left out); "" for a physical column.
	Metadata string
	// Computed is a computed column's expression ("name AS expr", Flink's
	// computed column); nil for a physical column, whose Type it then
	// leaves zero: the type is the expression's, found at CREATE.
	Computed Expr
}

// Watermark is "WATERMARK FOR Column AS Expr".
type Watermark struct {
	At       Pos
	Column   string
	ColumnAt Pos // where Column is written
	Expr     Expr
}

// Option is one "key = 'value'" entry of a WITH (...) clause.
type Option struct {
	At    Pos
	Key   string
	Value string
}

// CreateTable is clink's DDL: columns, an optional primary key and
// watermark, and connector options.
type CreateTable struct {
	At          Pos
	Name        string
	IfNotExists bool
	Columns     []ColumnDef
	PrimaryKey  []string
	PrimaryAt   []Pos // where each PrimaryKey column is written
	Watermark   *Watermark
	Options     []Option
}

// CreateView is "CREATE [MATERIALIZED] VIEW name [(cols)] AS query". Text
// is the query's source text; Columns, when given, renames the query's
// columns (one name each).
type CreateView struct {
	At           Pos
	Name         string
	Columns      []string
	IfNotExists  bool
	Materialized bool
	Query        *Query
	Text         string
}

// Insert is "INSERT INTO t [(cols)] VALUES (...), ..." or "INSERT INTO t query".
type Insert struct {
	At      Pos
	Table   string
	Columns []string
	Rows    [][]Expr // VALUES rows; nil when Query is set
	Query   *Query
}

// Drop is "DROP TABLE|VIEW [IF EXISTS] name".
type Drop struct {
	At       Pos
	Object   string // TABLE or VIEW
	Name     string
	IfExists bool
}

// Show is "SHOW TABLES", "SHOW VIEWS", "SHOW ALL" (every setting) or
// "SHOW name" (one setting, What "SETTING").
type Show struct {
	At      Pos
	What    string
	Setting string // the setting's name when What is "SETTING"
}

// Describe is "DESCRIBE name" (also DESC name).
type Describe struct {
	At   Pos
	Name string
}

// Explain is "EXPLAIN statement".
type Explain struct {
	At   Pos
	Stmt Statement
}

// Set is "SET key = value" (session configuration).
type Set struct {
	At    Pos
	Key   string
	Value string
	// ValueAt is where Value is written (zero when unknown).
	ValueAt Pos
}

// QueryStmt is a query run as a statement.
type QueryStmt struct {
	At    Pos
	Query *Query
}

// Position implementations.
func (s *CreateTable) Position() Pos { return s.At }
func (s *CreateView) Position() Pos  { return s.At }
func (s *Insert) Position() Pos      { return s.At }
func (s *Drop) Position() Pos        { return s.At }
func (s *Show) Position() Pos        { return s.At }
func (s *Describe) Position() Pos    { return s.At }
func (s *Explain) Position() Pos     { return s.At }
func (s *Set) Position() Pos         { return s.At }
func (s *QueryStmt) Position() Pos   { return s.At }

func (*CreateTable) stmtNode() {}
func (*CreateView) stmtNode()  {}
func (*Insert) stmtNode()      {}
func (*Drop) stmtNode()        {}
func (*Show) stmtNode()        {}
func (*Describe) stmtNode()    {}
func (*Explain) stmtNode()     {}
func (*Set) stmtNode()         {}
func (*QueryStmt) stmtNode()   {}
