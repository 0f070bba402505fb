/** Entry of the `agt` command (bin/agt.mjs runs the build of this file, or the source through tsx). */
import { main } from './main.js';

await main();
// The event stream and prompts hold the loop open; a finished command exits with its code.
process.exit(process.exitCode ?? 0);
