package sluice.pgclients;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.JDBCType;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.HexFormat;

/**
 * The JDBC client of Sluice's Postgres front-door tests. It connects with the PostgreSQL JDBC
 * driver and prints what DatabaseMetaData or a PreparedStatement returns as tab-separated
 * lines, so a test can compare them exactly.
 *
 * <pre>
 * java -jar pgclients-jdbc.jar URL USER PASSWORD COMMAND [ARGS]
 *   tables [TYPE,...|ALL [SCHEMA|ALL]]
 *                       getTables(null, schema, "%", types): TABLE_SCHEM TABLE_NAME TABLE_TYPE;
 *                       no TYPE means the types {"TABLE"}, ALL means null (every type); the
 *                       schema is "public" unless given, ALL means null (every schema)
 *   columns TABLE       getColumns(null, "public", TABLE, "%"): COLUMN_NAME DATA_TYPE
 *                       TYPE_NAME COLUMN_SIZE NULLABLE ORDINAL_POSITION (TABLE may be %)
 *   pk TABLE            getPrimaryKeys(null, "public", TABLE): COLUMN_NAME KEY_SEQ
 *   schemas | catalogs | tabletypes | typeinfo
 *                       that DatabaseMetaData call, every column, after a header line
 *   query SQL [TYPE:VALUE ...]
 *                       a PreparedStatement with typed parameters; a COLUMN line per result
 *                       column (label, JDBC type, driver type name), then a ROW line per row
 *                       whose values are CLASS:TEXT (getObject's class, getString) or NULL
 * </pre>
 *
 * Parameter types: int, bigint, double, decimal, string, bool, bytes (hex), date (YYYY-MM-DD),
 * time (HH:MM:SS), timestamp (YYYY-MM-DD HH:MM:SS[.f]); null:TYPE binds a NULL of that type.
 * Tabs, newlines and backslashes in values print escaped as \t, \n, \\. Errors print
 * "ERROR SQLSTATE message" on stderr and exit 1.
 */
public final class Jdbc {
  private Jdbc() {}

  public static void main(String[] args) {
    if (args.length < 4) {
      System.err.println("usage: URL USER PASSWORD COMMAND [ARGS] (see Jdbc.java)");
      System.exit(2);
    }
    try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2])) {
      run(conn, args[3], java.util.Arrays.copyOfRange(args, 4, args.length));
    } catch (SQLException e) {
      System.err.println("ERROR " + e.getSQLState() + " " + e.getMessage());
      System.exit(1);
    } catch (IllegalArgumentException e) {
      System.err.println("usage: " + e.getMessage());
      System.exit(2);
    }
  }

  private static void run(Connection conn, String command, String[] args) throws SQLException {
    DatabaseMetaData md = conn.getMetaData();
    switch (command) {
      case "tables": {
        String[] types = {"TABLE"};
        if (args.length > 0) {
          types = args[0].equals("ALL") ? null : args[0].split(",");
        }
        String schema = "public";
        if (args.length > 1) {
          schema = args[1].equals("ALL") ? null : args[1];
        }
        try (ResultSet rs = md.getTables(null, schema, "%", types)) {
          print(rs, "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE");
        }
        break;
      }
      case "columns":
        try (ResultSet rs = md.getColumns(null, "public", arg(args, 0, "TABLE"), "%")) {
          print(rs, "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "NULLABLE", "ORDINAL_POSITION");
        }
        break;
      case "pk":
        try (ResultSet rs = md.getPrimaryKeys(null, "public", arg(args, 0, "TABLE"))) {
          print(rs, "COLUMN_NAME", "KEY_SEQ");
        }
        break;
      case "schemas":
        try (ResultSet rs = md.getSchemas()) {
          printAll(rs);
        }
        break;
      case "catalogs":
        try (ResultSet rs = md.getCatalogs()) {
          printAll(rs);
        }
        break;
      case "tabletypes":
        try (ResultSet rs = md.getTableTypes()) {
          printAll(rs);
        }
        break;
      case "typeinfo":
        try (ResultSet rs = md.getTypeInfo()) {
          printAll(rs);
        }
        break;
      case "query":
        query(conn, arg(args, 0, "SQL"), java.util.Arrays.copyOfRange(args, 1, args.length));
        break;
      default:
        throw new IllegalArgumentException("unknown command " + command);
    }
  }

  private static String arg(String[] args, int i, String name) {
    if (args.length <= i) {
      throw new IllegalArgumentException("missing " + name);
    }
    return args[i];
  }

  private static void query(Connection conn, String sql, String[] params) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        bind(ps, i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData rmd = rs.getMetaData();
        int n = rmd.getColumnCount();
        for (int c = 1; c <= n; c++) {
          System.out.println("COLUMN\t" + rmd.getColumnLabel(c) + "\t"
              + JDBCType.valueOf(rmd.getColumnType(c)).getName() + "\t" + rmd.getColumnTypeName(c));
        }
        while (rs.next()) {
          StringBuilder line = new StringBuilder("ROW");
          for (int c = 1; c <= n; c++) {
            Object v = rs.getObject(c);
            line.append('\t');
            if (v == null) {
              line.append("NULL");
            } else {
              line.append(v.getClass().getSimpleName()).append(':').append(escape(rs.getString(c)));
            }
          }
          System.out.println(line);
        }
      }
    }
  }

  // bind sets parameter i from TYPE:VALUE, with the setter a Java program would use for it.
  private static void bind(PreparedStatement ps, int i, String param) throws SQLException {
    int colon = param.indexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("parameter " + i + " is not TYPE:VALUE: " + param);
    }
    String type = param.substring(0, colon);
    String v = param.substring(colon + 1);
    switch (type) {
      case "null": ps.setNull(i, sqlType(v)); break;
      case "int": ps.setInt(i, Integer.parseInt(v)); break;
      case "bigint": ps.setLong(i, Long.parseLong(v)); break;
      case "double": ps.setDouble(i, Double.parseDouble(v)); break;
      case "decimal": ps.setBigDecimal(i, new BigDecimal(v)); break;
      case "string": ps.setString(i, v); break;
      case "bool": ps.setBoolean(i, Boolean.parseBoolean(v)); break;
      case "bytes": ps.setBytes(i, HexFormat.of().parseHex(v)); break;
      case "date": ps.setDate(i, Date.valueOf(v)); break;
      case "time": ps.setTime(i, Time.valueOf(v)); break;
      case "timestamp": ps.setTimestamp(i, Timestamp.valueOf(v)); break;
      default: throw new IllegalArgumentException("parameter " + i + " has unknown type " + type);
    }
  }

  private static int sqlType(String type) {
    switch (type) {
      case "int": return Types.INTEGER;
      case "bigint": return Types.BIGINT;
      case "double": return Types.DOUBLE;
      case "decimal": return Types.NUMERIC;
      case "string": return Types.VARCHAR;
      case "bool": return Types.BOOLEAN;
      case "bytes": return Types.BINARY;
      case "date": return Types.DATE;
      case "time": return Types.TIME;
      case "timestamp": return Types.TIMESTAMP;
      default: throw new IllegalArgumentException("unknown NULL type " + type);
    }
  }

  private static void print(ResultSet rs, String... columns) throws SQLException {
    while (rs.next()) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < columns.length; c++) {
        if (c > 0) {
          line.append('\t');
        }
        String v = rs.getString(columns[c]);
        line.append(v == null ? "NULL" : escape(v));
      }
      System.out.println(line);
    }
  }

  private static void printAll(ResultSet rs) throws SQLException {
    ResultSetMetaData rmd = rs.getMetaData();
    int n = rmd.getColumnCount();
    String[] columns = new String[n];
    for (int c = 1; c <= n; c++) {
      columns[c - 1] = rmd.getColumnLabel(c);
    }
    System.out.println(String.join("\t", columns));
    print(rs, columns);
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
  }
}
