/**
 * Owner tasks in the channels tests: an approval made the way an agent makes one (a restricted tool the
 * model calls in a chat turn), and the task read back through the Tasks routes.
 */
import type { ChannelsRig } from './channels.js';
import { eventually } from './channels.js';

/** Restricts `sys_set_meta` and has the model call it; resolves with the pending approval task. */
export async function pendingApproval(rig: ChannelsRig, key: string): Promise<any> {
  const { d, agentId } = rig;
  const restricted = await d.request('PUT', `/agents/${agentId}/tools/sys_set_meta`, { restricted: true });
  if (restricted.status !== 200) throw new Error(`restrict: ${restricted.status} ${JSON.stringify(restricted.body)}`);
  const before = new Set((await tasks(rig)).map((task: any) => task.id));
  const chat = await d.request('POST', `/agents/${agentId}/chat`, {
    text: `call sys_set_meta ${JSON.stringify({ key, value: 'set by the approved call' })}`,
  });
  if (chat.status !== 202 && chat.status !== 200) throw new Error(`chat: ${chat.status} ${JSON.stringify(chat.body)}`);
  return eventually(`the approval task for ${key}`, async () =>
    (await tasks(rig)).find((task: any) => !before.has(task.id) && task.status === 'pending_approval'),
  );
}

export async function tasks(rig: ChannelsRig): Promise<any[]> {
  return (await rig.d.request('GET', `/agents/${rig.agentId}/tasks`)).body.tasks;
}

export async function task(rig: ChannelsRig, id: string): Promise<any> {
  return (await rig.d.request('GET', `/agents/${rig.agentId}/tasks/${id}`)).body;
}
