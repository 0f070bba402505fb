/**
 * The agent's loops (`GET /agents/{id}/loops`): main and the inner loops with their state, goal and tools, and
 * an editor: add an inner loop (`POST`), change its goal, turn it on or off (`PATCH`, which the daemon applies to
 * the running agent at once) and delete it (`DELETE`; its stream is archived). `main` is not editable here.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type LoopInfo } from './api.js';
import { errorText } from './util.js';
import { StateBadge } from './words.js';

export function Loops({ id }: { id: string }) {
  const [loops, setLoops] = useState<LoopInfo[] | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const load = () =>
    client.loops(id).then(
      (r) => setLoops(r.loops),
      (e) => setMessage(errorText(e)),
    );
  useEffect(() => void load(), [id]);
  const done = (text: string) => () => (setMessage(text), setEditing(null), load());
  const failed = (e: unknown) => setMessage(errorText(e));
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement;
    const name = field('loop-name').value.trim();
    client
      .addLoop(id, {
        name,
        goal: field('loop-goal').value.trim(),
        enabled: field('loop-enabled').checked,
        autostart: field('loop-autostart').checked,
      })
      .then(() => (form.reset(), done(`Added loop ${name}.`)()), failed);
  };
  const saveGoal = (event: Event, name: string) => {
    event.preventDefault();
    const goal = ((event.currentTarget as HTMLFormElement).elements.namedItem('goal') as HTMLTextAreaElement).value;
    client.patchLoop(id, name, { goal: goal.trim() }).then(done(`Saved the goal of ${name}.`), failed);
  };
  return (
    <div class="stack">
      <div class="table-wrap">
        <table class="loops">
          <caption class="sr-only">Loops</caption>
          <thead>
            <tr>
              <th scope="col">Loop</th>
              <th scope="col">State</th>
              <th scope="col">Goal</th>
              <th scope="col">Tools</th>
              <th scope="col" class="num">
                Entries
              </th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(loops ?? []).map((loop) => (
              <tr key={loop.name} data-loop={loop.name}>
                <th scope="row">{loop.name}</th>
                <td>
                  {loop.enabled ? <StateBadge state={loop.state} /> : <StateBadge state="off" />}
                  {loop.autostart === false && <div class="muted">starts when sent a message</div>}
                </td>
                <td>
                  {editing === loop.name ? (
                    <form onSubmit={(e) => saveGoal(e, loop.name)} class="stack">
                      <label for={`goal-${loop.name}`}>Goal of {loop.name}</label>
                      <textarea id={`goal-${loop.name}`} name="goal" rows={3} required>
                        {loop.goal ?? ''}
                      </textarea>
                      <div class="row">
                        <button type="submit" class="primary small">
                          Save goal
                        </button>
                        <button type="button" class="small" onClick={() => setEditing(null)}>
                          Cancel
                        </button>
                      </div>
                    </form>
                  ) : (
                    (loop.goal ?? <span class="muted">the agent's own conversation</span>)
                  )}
                </td>
                <td>{loop.effectiveTools ? loop.effectiveTools.join(', ') || 'none' : 'every enabled tool'}</td>
                <td class="num">{loop.entryCount}</td>
                <td>
                  {loop.name !== 'main' && (
                    <div class="row">
                      <button type="button" class="small" onClick={() => setEditing(loop.name)}>
                        Edit goal<span class="sr-only"> of {loop.name}</span>
                      </button>
                      <button
                        type="button"
                        class="small"
                        onClick={() =>
                          client
                            .patchLoop(id, loop.name, { enabled: !loop.enabled })
                            .then(done(`${loop.enabled ? 'Turned off' : 'Turned on'} ${loop.name}.`), failed)
                        }
                      >
                        {loop.enabled ? 'Turn off' : 'Turn on'}
                        <span class="sr-only"> {loop.name}</span>
                      </button>
                      <button
                        type="button"
                        class="small danger"
                        onClick={() => client.deleteLoop(id, loop.name).then(done(`Deleted ${loop.name}.`), failed)}
                      >
                        Delete<span class="sr-only"> {loop.name}</span>
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form onSubmit={add} aria-labelledby="add-loop-title">
        <h3 id="add-loop-title">Add a loop</h3>
        <div class="form-grid">
          <div>
            <label for="loop-name">Loop name</label>
            <input
              id="loop-name"
              name="loop-name"
              required
              pattern="[a-z0-9][a-z0-9_\-]{0,31}"
              placeholder="research"
            />
          </div>
          <div class="wide">
            <label for="loop-goal">Goal</label>
            <textarea id="loop-goal" name="loop-goal" rows={2} required />
          </div>
          <div class="check">
            <input id="loop-enabled" name="loop-enabled" type="checkbox" defaultChecked />
            <label for="loop-enabled">On</label>
          </div>
          <div class="check">
            <input id="loop-autostart" name="loop-autostart" type="checkbox" defaultChecked />
            <label for="loop-autostart">Start now and with the agent</label>
          </div>
        </div>
        <div class="row">
          <span class="spacer" />
          <button type="submit" class="primary">
            Add loop
          </button>
        </div>
      </form>
      {message && <p role="status">{message}</p>}
    </div>
  );
}
