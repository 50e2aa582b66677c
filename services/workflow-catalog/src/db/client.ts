import type { ServiceDatabase } from "../../../kit/src/db.ts";
import * as schema from "./schema.ts";

export { schema };
export type Db = ServiceDatabase<typeof schema>["db"];
