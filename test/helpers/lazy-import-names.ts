/**
 * The names a source file takes from a lazily imported package (`await import('pkg')`), read off its syntax tree:
 * `(await import(p)).A`, `const { A, default: b } = await import(p)`, a binding (`const m = ...`, `x ??= ...`, `this.m
 * = ...`, either branch of `?:`) and every `m.A` or `const { A } = m` on a name bound to it, a loader function
 * returning it and its calls, `import(p).then((m) => ...)`, `.catch(...)`, and `Promise.all([import(p), ...])` taken
 * apart by position. Bindings are followed by name across the file: a same-named binding of something else adds names,
 * never hides one. An import none of these reach gives no names, and the test using this says so rather than passing.
 */
import ts from 'typescript';

export interface LazyImport {
  specifier: string;
  line: number;
  names: string[];
}

const WRAPPERS = new Set([
  ts.SyntaxKind.ParenthesizedExpression,
  ts.SyntaxKind.AwaitExpression,
  ts.SyntaxKind.AsExpression,
  ts.SyntaxKind.NonNullExpression,
  ts.SyntaxKind.SatisfiesExpression,
  ts.SyntaxKind.TypeAssertionExpression,
]);
const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
]);

export function lazyImportsOf(fileName: string, text: string): LazyImport[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const all: ts.Node[] = [];
  const collect = (node: ts.Node): void => {
    all.push(node);
    node.forEachChild(collect);
  };
  collect(source);
  const identifiers = (name: string) =>
    all.filter((node): node is ts.Identifier => ts.isIdentifier(node) && node.text === name);
  const thisMembers = (name: string) =>
    all.filter(
      (node): node is ts.PropertyAccessExpression =>
        ts.isPropertyAccessExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ThisKeyword &&
        node.name.text === name,
    );

  function namesOfPattern(pattern: ts.BindingName, names: Set<string>, seen: Set<ts.Node>): void {
    if (ts.isIdentifier(pattern)) {
      for (const use of identifiers(pattern.text)) if (use !== pattern) valueAt(use, names, seen);
    } else if (ts.isObjectBindingPattern(pattern)) {
      for (const element of pattern.elements) {
        const key = element.propertyName ?? element.name;
        if (ts.isIdentifier(key) || ts.isStringLiteral(key)) names.add(key.text);
      }
    }
  }

  /** Adds the names taken from the module value that `node` evaluates to (or a promise of it). */
  function valueAt(node: ts.Node, names: Set<string>, seen: Set<ts.Node>): void {
    if (seen.has(node)) return;
    seen.add(node);
    let top = node;
    while (top.parent && WRAPPERS.has(top.parent.kind)) top = top.parent;
    const parent = top.parent;
    if (!parent) return;
    if (ts.isPropertyAccessExpression(parent) && parent.expression === top) {
      const name = parent.name.text;
      const call = parent.parent;
      if ((name === 'then' || name === 'catch' || name === 'finally') && call && ts.isCallExpression(call)) {
        if (name === 'then') {
          const callback = call.arguments[0];
          if (callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback)) && callback.parameters[0])
            namesOfPattern(callback.parameters[0].name, names, seen);
        } else valueAt(call, names, seen);
        return;
      }
      names.add(name);
    } else if (
      ts.isElementAccessExpression(parent) &&
      parent.expression === top &&
      ts.isStringLiteral(parent.argumentExpression)
    ) {
      names.add(parent.argumentExpression.text);
    } else if (ts.isVariableDeclaration(parent) && parent.initializer === top) {
      namesOfPattern(parent.name, names, seen);
      if (ts.isIdentifier(parent.name)) loaderCalls(parent.name.text, names, seen);
    } else if (ts.isBinaryExpression(parent) && parent.right === top && ASSIGNMENTS.has(parent.operatorToken.kind)) {
      if (ts.isIdentifier(parent.left)) namesOfPattern(parent.left, names, seen);
      else if (
        ts.isPropertyAccessExpression(parent.left) &&
        parent.left.expression.kind === ts.SyntaxKind.ThisKeyword
      ) {
        for (const member of thisMembers(parent.left.name.text))
          if (member !== parent.left) valueAt(member, names, seen);
      }
      valueAt(parent, names, seen);
    } else if (ts.isConditionalExpression(parent) && parent.condition !== top) {
      valueAt(parent, names, seen);
    } else if (ts.isArrowFunction(parent) && parent.body === top) {
      functionCalls(parent, names, seen);
    } else if (ts.isReturnStatement(parent)) {
      const fn = ts.findAncestor(parent, ts.isFunctionLike);
      if (fn) functionCalls(fn, names, seen);
    } else if (ts.isArrayLiteralExpression(parent)) {
      tupleElement(parent, parent.elements.indexOf(top as ts.Expression), names, seen);
    }
  }

  /** A `const load = () => import(p)` style binding: its calls evaluate to the module too. */
  function loaderCalls(name: string, names: Set<string>, seen: Set<ts.Node>): void {
    for (const use of identifiers(name))
      if (use.parent && ts.isCallExpression(use.parent) && use.parent.expression === use)
        valueAt(use.parent, names, seen);
  }

  function functionCalls(fn: ts.Node, names: Set<string>, seen: Set<ts.Node>): void {
    const name =
      ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)
        ? fn.name
        : fn.parent && ts.isVariableDeclaration(fn.parent)
          ? fn.parent.name
          : undefined;
    if (name && ts.isIdentifier(name)) loaderCalls(name.text, names, seen);
  }

  /** `Promise.all([a, import(p)])`: position `index` of what it resolves to. */
  function tupleElement(array: ts.ArrayLiteralExpression, index: number, names: Set<string>, seen: Set<ts.Node>): void {
    const all = array.parent;
    if (!all || !ts.isCallExpression(all) || all.expression.getText() !== 'Promise.all') return;
    let top: ts.Node = all;
    while (top.parent && WRAPPERS.has(top.parent.kind)) top = top.parent;
    const parent = top.parent;
    let pattern: ts.BindingName | undefined;
    if (parent && ts.isVariableDeclaration(parent)) pattern = parent.name;
    else if (
      parent &&
      ts.isPropertyAccessExpression(parent) &&
      parent.name.text === 'then' &&
      ts.isCallExpression(parent.parent)
    ) {
      const callback = parent.parent.arguments[0];
      if (callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback)))
        pattern = callback.parameters[0]?.name;
    }
    if (pattern && ts.isArrayBindingPattern(pattern)) {
      const element = pattern.elements[index];
      if (element && ts.isBindingElement(element)) namesOfPattern(element.name, names, seen);
    }
  }

  const found: LazyImport[] = [];
  for (const node of all) {
    if (!ts.isCallExpression(node) || node.expression.kind !== ts.SyntaxKind.ImportKeyword) continue;
    const argument = node.arguments[0];
    if (!argument || !ts.isStringLiteralLike(argument)) continue;
    const names = new Set<string>();
    valueAt(node, names, new Set());
    found.push({
      specifier: argument.text,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      names: [...names].sort(),
    });
  }
  return found;
}
