type Json = Record<string, unknown>;
export function typeOf(node: unknown, components?: Record<string, unknown>): string;
export function fieldTable(schema: unknown, components?: Record<string, unknown>): string;
export function renderEventReference(input: {
  names: readonly string[];
  descriptions: Record<string, string>;
  schemas: Record<string, Json>;
  examples: Record<string, unknown>;
}): string;
export function renderApiReference(doc: Json): string;
