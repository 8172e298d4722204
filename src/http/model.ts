import { t } from "elysia";
import { ERROR_TYPES } from "./errors";

/** D15: every REST error body. */
export const ErrorBody = t.Object({
  type: t.String({ enum: Object.values(ERROR_TYPES), description: "Error code (first document part 7)" }),
  message: t.String(),
});
