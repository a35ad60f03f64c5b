// A small real A2A agent for mcptask's tests, built on @a2a-js/sdk (the A2A project's
// TypeScript SDK) with push notifications on: its in-memory push config store and its sender,
// which POSTs each update of a task to the config's URL with `X-A2A-Notification-Token`.
//
//   A2A_JS_MODULES=<folder holding node_modules> node a2a_js_server.cjs --port P
//
// It binds 127.0.0.1 and serves the agent card at /.well-known/agent-card.json and JSON-RPC at
// /a2a/jsonrpc: A2A 1.0 (`A2A-Version: 1.0`), and 0.3 through the SDK's compat layer (no
// header), push included (a 0.3 webhook gets 0.3 bodies). Every message starts a task:
// "step i/3" working updates `--step-ms` apart (default 1000), an artifact `echo: <text>`, then
// completed; `slow...` takes 20 steps; `report...` streams a text artifact in four appended
// chunks a step apart and ends with a 4 KiB file artifact (as `a2a_report.py` says). `--no-streaming` says `streaming: false` in the card.
'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');

const modules = process.env.A2A_JS_MODULES;
if (!modules) {
  console.error('A2A_JS_MODULES must name the folder that holds node_modules');
  process.exit(2);
}
const need = createRequire(path.join(modules, 'package.json'));
const express = need('express');
const { randomUUID } = require('node:crypto');
const sdk = need('@a2a-js/sdk');
const server = need('@a2a-js/sdk/server');
const { agentCardHandler, jsonRpcHandler, UserBuilder } = need('@a2a-js/sdk/server/express');
const compat = need('@a2a-js/sdk/compat/v0_3/server');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const PORT = Number(arg('--port'));
const STEP_MS = Number(arg('--step-ms', '1000'));
// streaming off: updates reach a client only by webhook or by polling
const STREAMING = !process.argv.includes('--no-streaming');
const BASE = `http://127.0.0.1:${PORT}`;
const { TaskState, Role } = sdk;

function textPart(value) {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function userText(message) {
  for (const part of (message && message.parts) || []) {
    if (part.content && part.content.$case === 'text') return part.content.value;
  }
  return '';
}

class EchoExecutor {
  constructor() {
    this.cancelled = new Set();
    this.cancelTask = async (taskId, eventBus) => {
      this.cancelled.add(taskId);
    };
  }

  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const text = userText(ctx.userMessage);
    const now = () => new Date().toISOString();
    const status = (state, message) => ({
      taskId,
      contextId,
      status: { state, timestamp: now(), message },
      metadata: {},
    });
    try {
      if (!ctx.task) {
        bus.publish(server.AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: {},
        }));
      }
      if (text.toLowerCase().startsWith('report')) {
        // the chunks and the file of `a2a_report.py`: a text artifact appended in four chunks
        // a step apart, then 4 KiB of bytes as a `raw` part
        const chunks = ['# Report\n', 'first finding\n', 'second finding\n', 'the end\n'];
        bus.publish(server.AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING, undefined)));
        for (let i = 0; i < chunks.length; i++) {
          bus.publish(server.AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'report',
              name: 'report.md',
              description: '',
              parts: [textPart(chunks[i])],
              metadata: undefined,
              extensions: [],
            },
            append: i > 0,
            lastChunk: i === chunks.length - 1,
            metadata: undefined,
          }));
          await new Promise((resolve) => setTimeout(resolve, STEP_MS));
        }
        const bytes = new Uint8Array(4096);
        for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
        bus.publish(server.AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'data',
            name: 'data',
            description: '',
            parts: [{
              content: { $case: 'raw', value: Buffer.from(bytes) },
              metadata: undefined,
              filename: 'data.bin',
              mediaType: 'application/octet-stream',
            }],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }));
        bus.publish(server.AgentEvent.statusUpdate(status(TaskState.TASK_STATE_COMPLETED, undefined)));
        return;
      }
      const steps = text.toLowerCase().startsWith('slow') ? 20 : 3;
      for (let i = 1; i <= steps; i++) {
        if (this.cancelled.has(taskId)) {
          bus.publish(server.AgentEvent.statusUpdate(status(TaskState.TASK_STATE_CANCELED, undefined)));
          return;
        }
        bus.publish(server.AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING, {
          role: Role.ROLE_AGENT,
          messageId: randomUUID(),
          parts: [textPart(`step ${i}/${steps}`)],
          taskId,
          contextId,
          extensions: [],
          metadata: {},
          referenceTaskIds: [],
        })));
        await new Promise((resolve) => setTimeout(resolve, STEP_MS));
      }
      bus.publish(server.AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: [textPart(`echo: ${text}`)],
          metadata: undefined,
          extensions: [],
        },
        lastChunk: true,
        append: false,
        metadata: undefined,
      }));
      bus.publish(server.AgentEvent.statusUpdate(status(TaskState.TASK_STATE_COMPLETED, undefined)));
    } finally {
      this.cancelled.delete(taskId);
    }
  }
}

const card = {
  name: 'mcptask a2a-js test agent',
  description: 'Echoes its input after a few working steps (@a2a-js/sdk test server, push on).',
  supportedInterfaces: [
    { url: `${BASE}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: sdk.A2A_PROTOCOL_VERSION },
    { url: `${BASE}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
  ],
  version: '1.0.0',
  capabilities: { streaming: STREAMING, pushNotifications: true, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  skills: [{
    id: 'echo',
    name: 'echo',
    description: "Echo the input; 'slow...' takes 20 steps.",
    tags: ['test'],
    examples: ['hello'],
    inputModes: ['text'],
    outputModes: ['text'],
    securityRequirements: [],
  }],
  documentationUrl: '',
  signatures: [],
};

const store = new server.InMemoryPushNotificationStore();
const sender = compat.createLegacyAwarePushNotificationSender(store, {
  timeout: 5000,
  tokenHeaderName: 'X-A2A-Notification-Token',
});
const handler = new server.DefaultRequestHandler(
  card, new server.InMemoryTaskStore(), new EchoExecutor(), undefined, store, sender,
);
const app = express();
app.use(`/${sdk.AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }));
app.use('/a2a/jsonrpc', jsonRpcHandler({
  requestHandler: handler,
  userBuilder: UserBuilder.noAuthentication,
  legacyCompat: { enabled: true },
}));
const listening = app.listen(PORT, '127.0.0.1', () => console.error(`a2a-js agent on ${BASE}`));
listening.on('error', (err) => {
  console.error(err);
  process.exit(1);
});
