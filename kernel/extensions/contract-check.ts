/**
 * Whether an extension was built against a contract this kernel implements. Two declarations count:
 * - the definition's `contract` (`major.minor`): same major, minor not newer than the kernel's;
 * - its own package's range (the nearest package.json above the module): `agtContract` (`"^1.0.0"`), else
 *   its `peerDependencies` (or `dependencies`) entry for `@agt/contracts`, checked with semver against the
 *   version of the contract package this kernel ships. A module without a package of its own (a shipped
 *   extension, whose nearest package.json is agt's) declares no range there.
 * A refusal fails the extension with the stable code `contract_incompatible` (GET /runtime/extensions
 * `errorCode`) and a sentence naming both versions.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import semver from 'semver';
import contractsPackage from '../../contracts/package.json' with { type: 'json' };
import { CONTRACT_VERSION } from '@agt/contracts';

/** The stable code of a refused extension (docs/extensions.md "Compatibility"). */
export const CONTRACT_INCOMPATIBLE = 'contract_incompatible';
/** The full semver version of the contract this kernel ships (contracts/package.json). */
export const CONTRACT_PACKAGE_VERSION: string = contractsPackage.version;

/** Whether `wanted` (`major.minor`) can run on this kernel: same major, minor not newer. */
export function contractSatisfied(wanted: string, kernel: string = CONTRACT_VERSION): boolean {
  const [wantMajor, wantMinor] = wanted.split('.').map(Number);
  const [haveMajor, haveMinor] = kernel.split('.').map(Number);
  return wantMajor === haveMajor && (wantMinor ?? 0) <= (haveMinor ?? 0);
}

interface PackageDeclaration {
  name?: string;
  agtContract?: unknown;
  peerDependencies?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
}

/** The contract range the module's own package declares, with where it says so; null when none. */
export function declaredContractRange(moduleFile: string): { range: string; where: string } | null {
  for (let dir = dirname(moduleFile); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      let pkg: PackageDeclaration;
      try {
        pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageDeclaration;
      } catch {
        return null;
      }
      const label = pkg.name ?? file;
      if (typeof pkg.agtContract === 'string') return { range: pkg.agtContract, where: `${label} agtContract` };
      for (const field of ['peerDependencies', 'dependencies'] as const) {
        const range = pkg[field]?.['@agt/contracts'];
        // A workspace or file link names no version range: nothing to check.
        if (typeof range === 'string' && semver.validRange(range))
          return { range, where: `${label} ${field}["@agt/contracts"]` };
      }
      return null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Why the extension at `moduleFile` with definition `contract` cannot run on this kernel, or null. */
export function contractProblem(
  contract: unknown,
  moduleFile: string,
  kernelVersion: string = CONTRACT_PACKAGE_VERSION,
): string | null {
  const kernelContract = kernelVersion.split('.').slice(0, 2).join('.');
  if (
    typeof contract === 'string' &&
    /^\d+\.\d+(\.\d+)?$/.test(contract) &&
    !contractSatisfied(contract, kernelContract)
  ) {
    return `needs kernel contract ${contract}, but this kernel implements ${kernelContract} (the major must match and the minor must not be newer)`;
  }
  const declared = declaredContractRange(moduleFile);
  if (declared && !semver.satisfies(kernelVersion, declared.range)) {
    return `built against @agt/contracts ${declared.range} (${declared.where}), but this kernel implements ${kernelVersion}`;
  }
  return null;
}
