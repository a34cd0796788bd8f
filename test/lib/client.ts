/** Helpers for the tests of the client package (test/client/). */

/** Every item of an async iterable, in order. */
export const readAll = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

/** A fetch that records the status of every answer, so a test sees the retries a call made. */
export const recordingFetch = () => {
  const statuses: number[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  return { statuses, fetch: fetcher };
};
