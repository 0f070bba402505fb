/**
 * An MCP `tools/call` result as the kernel's {@link ToolResult}: text parts joined, images passed on as
 * images (the kernel hands them to the model in its provider's format), embedded resources as their
 * text (or as an image when they are one), resource links and audio described in words, and
 * `structuredContent` as JSON when the server sent no text.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ToolImage, ToolResult } from '@agt/contracts';

export function toToolResult(result: CallToolResult): ToolResult {
  const texts: string[] = [];
  const images: ToolImage[] = [];
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        break;
      case 'image':
        images.push({ mimeType: part.mimeType, data: part.data });
        texts.push(`[image ${part.mimeType}]`);
        break;
      case 'audio':
        texts.push(
          `[audio ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes, not passed to the model]`,
        );
        break;
      case 'resource': {
        const resource = part.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        const label = `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]`;
        if (typeof resource.text === 'string') texts.push(`${label}\n${resource.text}`);
        else if (typeof resource.blob === 'string' && resource.mimeType?.startsWith('image/')) {
          images.push({ mimeType: resource.mimeType, data: resource.blob });
          texts.push(label);
        } else
          texts.push(
            `${label} ${Math.floor(((resource.blob ?? '').length * 3) / 4)} bytes of binary content, not passed to the model`,
          );
        break;
      }
      case 'resource_link':
        texts.push(
          `[resource link ${part.uri}${part.name ? ` "${part.name}"` : ''}${part.description ? `: ${part.description}` : ''}]`,
        );
        break;
      default:
        texts.push(`[content of type ${(part as { type: string }).type}]`);
    }
  }
  if (texts.length === 0 && result.structuredContent !== undefined)
    texts.push(JSON.stringify(result.structuredContent));
  return {
    content: texts.join('\n') || '(no content)',
    ...(result.isError ? { isError: true } : {}),
    ...(images.length > 0 ? { images } : {}),
  };
}
