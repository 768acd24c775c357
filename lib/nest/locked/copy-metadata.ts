/**
 * Copies every reflect-metadata entry of one function onto another, so that a wrapper keeps the
 * route, cron, Swagger and other metadata that decorators applied before it put on the original.
 */
export function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    const value: unknown = Reflect.getOwnMetadata(key, from);
    Reflect.defineMetadata(key, Array.isArray(value) ? [...(value as unknown[])] : value, to);
  }
}
