/**
 * Dependency order of extensions: a topological sort that keeps the manifest's order where
 * dependencies allow it, and reports each dependency cycle with all its members (Tarjan's strongly
 * connected components), so every member can fail naming the whole cycle.
 */

export interface OrderNode {
  name: string;
  dependsOn: readonly string[];
}

export interface OrderResult {
  /** Every node's name, dependencies before dependents; cycle members keep their manifest position. */
  order: string[];
  /** Member name -> the cycle it is in, as a readable path (`a -> b -> a`). */
  cycles: Map<string, string>;
}

/** Strongly connected components with more than one member (self-loops are refused earlier). */
function findCycles(nodes: readonly OrderNode[], known: Map<string, OrderNode>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];

  const visit = (name: string) => {
    index.set(name, counter);
    low.set(name, counter);
    counter++;
    stack.push(name);
    onStack.add(name);
    for (const dep of known.get(name)!.dependsOn) {
      if (!known.has(dep)) continue;
      if (!index.has(dep)) {
        visit(dep);
        low.set(name, Math.min(low.get(name)!, low.get(dep)!));
      } else if (onStack.has(dep)) {
        low.set(name, Math.min(low.get(name)!, index.get(dep)!));
      }
    }
    if (low.get(name) === index.get(name)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== name);
      if (component.length > 1) out.push(component);
    }
  };
  for (const node of nodes) if (!index.has(node.name)) visit(node.name);
  return out;
}

/** Describes a cycle by walking its members along their dependencies, in manifest order. */
function describeCycle(members: string[], known: Map<string, OrderNode>, position: Map<string, number>): string {
  const inCycle = new Set(members);
  const start = [...members].sort((a, b) => position.get(a)! - position.get(b)!)[0]!;
  const path = [start];
  const seen = new Set([start]);
  let current = start;
  for (;;) {
    const next = known.get(current)!.dependsOn.find((dep) => inCycle.has(dep) && (!seen.has(dep) || dep === start));
    if (next === undefined || next === start) break;
    path.push(next);
    seen.add(next);
    current = next;
  }
  return [...path, start].join(' -> ');
}

/** Orders `nodes` so each comes after the nodes it depends on; unknown dependencies are ignored here. */
export function orderByDependencies(nodes: readonly OrderNode[]): OrderResult {
  const known = new Map(nodes.map((node) => [node.name, node]));
  const position = new Map(nodes.map((node, i) => [node.name, i]));
  const cycles = new Map<string, string>();
  for (const members of findCycles(nodes, known)) {
    const text = describeCycle(members, known, position);
    for (const member of members) cycles.set(member, text);
  }

  const order: string[] = [];
  const placed = new Set<string>();
  const place = (name: string) => {
    if (placed.has(name)) return;
    placed.add(name);
    // Cycle members are not ordered among themselves: they all fail and never register.
    if (!cycles.has(name))
      for (const dep of known.get(name)!.dependsOn) if (known.has(dep) && !cycles.has(dep)) place(dep);
    order.push(name);
  };
  for (const node of nodes) place(node.name);
  return { order, cycles };
}
