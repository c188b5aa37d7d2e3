package instagram_test

import (
	"fmt"

	"github.com/idkit/idkit/instagram"
)

// The function for logical shard 5 in its own schema, as
// "idkit sql instagram --shard 5 --schema shard5" prints it.
func ExampleSQL() {
	sql, err := instagram.SQL(instagram.Options{Shard: 5, Schema: "shard5"})
	if err != nil {
		panic(err)
	}
	fmt.Print(sql)
	// Output:
	// -- next_id() of "Sharding & IDs at Instagram" for logical shard 5.
	// -- bit 63: 0 | 40 bits: ms since 2011-08-24T21:07:01.721Z | 13 bits: shard | 10 bits: nextval % 1024
	// -- Decodes with idkit's snowflake preset "instagram". Raises an error from
	// -- 2046-06-27T17:00:49.497Z on, where the post's 41-bit version would set the sign bit.
	// -- At most 1024 IDs per millisecond per shard.
	// CREATE SCHEMA IF NOT EXISTS shard5;
	// CREATE SEQUENCE IF NOT EXISTS shard5.next_id_seq;
	// CREATE OR REPLACE FUNCTION shard5.next_id(OUT result bigint) AS $$
	// DECLARE
	//     our_epoch bigint := 1314220021721;
	//     seq_id bigint;
	//     now_millis bigint;
	//     shard_id int := 5;
	// BEGIN
	//     SELECT nextval('shard5.next_id_seq') % 1024 INTO seq_id;
	//     SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
	//     IF now_millis < our_epoch OR now_millis - our_epoch >= 1099511627776 THEN
	//         RAISE EXCEPTION 'next_id: clock_timestamp() % is outside % to %, the 40-bit time field',
	//             clock_timestamp(), '2011-08-24T21:07:01.721Z', '2046-06-27T17:00:49.497Z';
	//     END IF;
	//     result := (now_millis - our_epoch) << 23;
	//     result := result | (shard_id << 10);
	//     result := result | (seq_id);
	// END;
	// $$ LANGUAGE PLPGSQL;
	// -- Use it as a key's default:
	// --   CREATE TABLE shard5.our_table (id bigint NOT NULL DEFAULT shard5.next_id() PRIMARY KEY, ...);
}
