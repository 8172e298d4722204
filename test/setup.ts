import { setDefaultTimeout } from "bun:test";

// Preloaded before every test file (bunfig.toml). Tests that start servers, build the
// executable or load the model need more than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);
