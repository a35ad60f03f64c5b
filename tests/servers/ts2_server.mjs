// An MCP server on the TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0): it speaks
// 2026-07-28 without the tasks extension (a tool that needs input answers a multi round-trip
// `input_required` result) and keeps a stateless 2025 leg beside it (`createMcpHandler`'s
// default). Run with node from the folder the `ts2` environment installs (see mcp_envs.py):
//
//     node ts2_server.mjs PORT        # endpoint http://127.0.0.1:PORT/mcp
//
// Tools: slow_echo (progress "step i/n" every 0.2 s), ask_name (asks a name by form
// elicitation, then greets; a decline or cancel ends it), ask_size (a form with a default).
import http from 'node:http';
import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import * as z from 'zod';

const port = Number(process.argv[2]);

function factory() {
    const server = new McpServer({ name: 'mcptask-ts2', version: '1.0.0' });
    server.registerTool(
        'slow_echo',
        {
            description: 'Echo text after a few steps, reporting progress',
            inputSchema: z.object({ text: z.string(), steps: z.number().int().default(3) })
        },
        async ({ text, steps }, ctx) => {
            const token = ctx.mcpReq._meta?.progressToken;
            for (let i = 1; i <= steps; i++) {
                if (token !== undefined) {
                    await ctx.mcpReq.notify({
                        method: 'notifications/progress',
                        params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` }
                    });
                }
                await new Promise(resolve => setTimeout(resolve, 200));
            }
            return { content: [{ type: 'text', text: `echo: ${text}` }] };
        }
    );
    server.registerTool(
        'ask_name',
        { description: 'Ask for a name, then greet', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const answer = ctx.mcpReq.inputResponses?.name;
            if (answer !== undefined && answer.action !== 'accept') {
                return { content: [{ type: 'text', text: `no name (${answer.action})` }] };
            }
            const given = acceptedContent(ctx.mcpReq.inputResponses, 'name');
            if (given === undefined) {
                return inputRequired({
                    inputRequests: {
                        name: inputRequired.elicit({
                            message: 'What is your name?',
                            requestedSchema: {
                                type: 'object',
                                properties: { name: { type: 'string', description: 'Your name' } },
                                required: ['name']
                            }
                        })
                    }
                });
            }
            return { content: [{ type: 'text', text: `Hello, ${given.name}!` }] };
        }
    );
    server.registerTool(
        'ask_size',
        { description: 'Ask for a size (the form has a default), then say it', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const given = acceptedContent(ctx.mcpReq.inputResponses, 'size');
            if (given === undefined) {
                return inputRequired({
                    inputRequests: {
                        size: inputRequired.elicit({
                            message: 'Which size?',
                            requestedSchema: {
                                type: 'object',
                                properties: { size: { type: 'string', enum: ['s', 'm', 'l'], default: 'm' } }
                            }
                        })
                    }
                });
            }
            return { content: [{ type: 'text', text: `size ${given.size}` }] };
        }
    );
    return server;
}

const handler = createMcpHandler(factory);

http.createServer(async (req, res) => {
    try {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const body = Buffer.concat(chunks);
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
            if (Array.isArray(v)) v.forEach(x => headers.append(k, x));
            else if (v !== undefined) headers.set(k, v);
        }
        const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
            method: req.method,
            headers,
            body: req.method === 'GET' || req.method === 'HEAD' || body.length === 0 ? undefined : body
        });
        const response = await handler.fetch(request);
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        if (response.body) {
            for await (const chunk of response.body) res.write(chunk);
        }
        res.end();
    } catch (err) {
        console.error(err);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
    }
}).listen(port, '127.0.0.1', () => console.error(`listening on ${port}`));
