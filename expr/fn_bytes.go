package expr

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"

	"github.com/sluice-sql/sluice/types"
)

// INT_FROM_BYTES, BIGINT_FROM_BYTES and DOUBLE_FROM_BYTES read a number
// from its 4 or 8 bytes, big-endian unless the second argument says
// 'LITTLE_ENDIAN' (NULL for bytes of another length or an unknown byte
// order); MD5 is the hex MD5 digest of a string's UTF-8 bytes.
func init() {
	fromBytes := func(name string, size int, t types.Type, conv func(binary.ByteOrder, []byte) any) {
		register(&scalar{name: name, doc: "The " + strings.TrimSuffix(name, "_FROM_BYTES") + " in 4 or 8 bytes, BIG_ENDIAN (default) or LITTLE_ENDIAN.",
			bind: func(args []types.Type) (types.Type, func([]any) any, error) {
				if err := strCheck(name, args, 1, 2, types.Bytes, types.String); err != nil {
					return types.Type{}, nil, err
				}
				return t, func(a []any) any {
					b, ok := a[0].([]byte)
					if !ok || len(b) != size {
						return nil
					}
					var order binary.ByteOrder = binary.BigEndian
					if len(a) == 2 {
						s, ok := a[1].(string)
						switch {
						case !ok:
							return nil
						case strings.EqualFold(s, "LITTLE_ENDIAN"):
							order = binary.LittleEndian
						case !strings.EqualFold(s, "BIG_ENDIAN"):
							return nil
						}
					}
					return conv(order, b)
				}, nil
			}})
	}
	fromBytes("INT_FROM_BYTES", 4, types.IntegerType, func(o binary.ByteOrder, b []byte) any { return int32(o.Uint32(b)) })
	fromBytes("BIGINT_FROM_BYTES", 8, types.BigIntType, func(o binary.ByteOrder, b []byte) any { return int64(o.Uint64(b)) })
	fromBytes("DOUBLE_FROM_BYTES", 8, types.DoubleType, func(o binary.ByteOrder, b []byte) any { return math.Float64frombits(o.Uint64(b)) })
	register(&scalar{name: "MD5", doc: "The MD5 digest of a string's UTF-8 bytes, in hex.",
		bind: func(args []types.Type) (types.Type, func([]any) any, error) {
			if err := strCheck("MD5", args, 1, 1, types.String); err != nil {
				return types.Type{}, nil, err
			}
			return types.StringType, func(a []any) any {
				s, ok := a[0].(string)
				if !ok {
					return nil
				}
				sum := md5.Sum([]byte(s))
				return hex.EncodeToString(sum[:])
			}, nil
		}})
}
