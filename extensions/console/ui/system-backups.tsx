/**
 * Backups in the System view: the schedule of `GET /backups` in words, Run now (`POST /backups/run`), the files of
 * the backups folder (`GET /backups/files`: agent, time, size and whether sealed; the path in the Restore button's title, to
 * fit a phone) each with Restore, and a restore from any
 * file on the daemon's machine (`POST /agents/restore`, optionally as a new agent).
 */
import { useState } from 'preact/hooks';
import { client } from './api.js';
import { errorText, useLive } from './util.js';
import { relative, Term } from './words.js';

const size = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;

function Files({ asNew, say }: { asNew: boolean; say: (text: string) => void }) {
  const { data, error } = useLive(
    () => client.backupFiles(),
    (type) => type.startsWith('backup.'),
  );
  if (error) return <p class="muted">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  if (data.files.length === 0) return <p class="muted">No backup files in {data.dir} yet.</p>;
  const restore = (from: string) =>
    client.restore({ from, asNew }).then(
      (r) => say(`Restored ${r.name} to ${r.filePath}.`),
      (e) => say(errorText(e)),
    );
  return (
    <div class="table-wrap">
      <table class="backup-files">
        <caption class="sr-only">Backup files in {data.dir}</caption>
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Made</th>
            <th scope="col">Size</th>
            <th scope="col">
              <span class="sr-only">Restore</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {data.files.map((file) => (
            <tr key={file.path} data-backup={file.name}>
              <td>
                <Term word={`…${file.agentId.slice(-8)}`} raw={file.agentId} />
              </td>
              <td title={new Date(file.modifiedAt).toLocaleString()}>{relative(Date.parse(file.modifiedAt))}</td>
              <td>
                {size(file.bytes)}
                <br />
                <span class="muted">{file.sealed ? 'sealed' : 'not sealed'}</span>
              </td>
              <td>
                <button
                  type="button"
                  class="small"
                  title={file.path}
                  aria-label={`Restore ${file.name}`}
                  onClick={() => restore(file.path)}
                >
                  Restore
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Backups() {
  const { data, error } = useLive(
    () => client.backupSchedule(),
    (type) => type.startsWith('backup.'),
  );
  const [message, setMessage] = useState('');
  const [asNew, setAsNew] = useState(false);
  const [running, setRunning] = useState(false);
  const runNow = () => {
    setRunning(true);
    client
      .runBackups()
      .then(
        (r) => setMessage(`Backed up ${r.completed} agent file(s)${r.failed ? `, ${r.failed} failed` : ''}.`),
        (e) => setMessage(errorText(e)),
      )
      .finally(() => setRunning(false));
  };
  const restore = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const from = (form.elements.namedItem('restore-from') as HTMLInputElement).value.trim();
    client.restore({ from, asNew }).then(
      (r) => (form.reset(), setMessage(`Restored ${r.name} to ${r.filePath}.`)),
      (e) => setMessage(errorText(e)),
    );
  };
  return (
    <section aria-labelledby="backups-title" class="panel">
      <div class="head-row">
        <h2 id="backups-title">Backups</h2>
        {data && (
          <Term
            word={data.enabled ? 'Scheduled' : 'Not scheduled'}
            raw={`every: ${data.every ?? 'none'}, keep: ${data.keep ?? 'all'}, dir: ${data.dir ?? 'default'}`}
            tone={data.problem ? 'error' : data.enabled ? 'ok' : 'off'}
          />
        )}
      </div>
      {error && <p class="muted">{error}</p>}
      {data && (
        <p class="muted">
          {data.enabled
            ? `Every ${data.every}${data.keep ? `, keeping the newest ${data.keep}` : ''}${data.sealed ? ', sealed' : ''}. `
            : 'No schedule: Run now backs every agent up once, or set backups in the settings. '}
          {data.nextRunAt ? `Next: ${new Date(data.nextRunAt).toLocaleString()}. ` : ''}
          {data.lastRun ? `Last run: ${data.lastRun.completed} saved, ${data.lastRun.failed} failed.` : ''}
          {data.problem ? ` Problem: ${data.problem}` : ''}
        </p>
      )}
      <div class="row">
        <button type="button" class="primary" onClick={runNow} disabled={running}>
          {running ? 'Backing up…' : 'Run now'}
        </button>
        <label>
          <input type="checkbox" checked={asNew} onChange={(e) => setAsNew(e.currentTarget.checked)} /> Restore as a new
          agent (new id and keys)
        </label>
      </div>
      <h3>Backup files</h3>
      <Files asNew={asNew} say={setMessage} />
      <form onSubmit={restore} aria-labelledby="restore-title">
        <h3 id="restore-title">Restore another file</h3>
        <div class="form-grid">
          <div>
            <label for="restore-from">Backup file on the daemon's machine</label>
            <input id="restore-from" name="restore-from" required placeholder="/path/to/agent.agt" />
          </div>
        </div>
        <div class="row">
          <span class="spacer" />
          <button type="submit" class="primary">
            Restore
          </button>
        </div>
      </form>
      {message && <p role="status">{message}</p>}
    </section>
  );
}
