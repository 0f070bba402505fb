import { isStaticElf } from '../extensions/compute/image.js';
console.log(await isStaticElf('/bin/busybox'), await isStaticElf('/bin/ls'), await isStaticElf('/etc/passwd'));
