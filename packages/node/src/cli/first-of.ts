// The SDK's lists are async iterations (docs/server-sdk.md, "Resources"); the CLI wants one item of them.

/** The first item of `items` that `matches` (any by default), if one does: the rest is never read. */
export async function firstOf<Item>(items: AsyncIterable<Item>, matches: (item: Item) => boolean = () => true): Promise<Item | undefined> {
  for await (const item of items) if (matches(item)) return item;
  return undefined;
}
