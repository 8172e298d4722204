// How long a token this service signs lives (`corpus token create --ttl`): its own module, so
// that the command's help reads the bounds without loading the signing code.
export const DEFAULT_TTL_SECONDS = 3600;
export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 365 * 24 * 3600;
