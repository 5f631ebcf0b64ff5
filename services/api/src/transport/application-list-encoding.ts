// `app list` answers from encodings made once per application version. The applications cache hands
// out the same StoredApplication object for as long as an application's stamp (version, uid,
// creation time, status) is unchanged, and never mutates it, so an encoding remembered against that
// object is the encoding of what the caller would otherwise get; a changed application is a new
// object, encoded afresh, and the old one's encodings go with it (WeakMap).
import { apiv1 } from '@capstan/proto';
import type { StoredApplication } from '../applications/application.repository.js';
import { applicationView } from './views.js';
import { EncodedResponse, spliceMessage } from './encoded-response.js';

const protoOf = new WeakMap<StoredApplication, Buffer>();
const jsonOf = new WeakMap<StoredApplication, string>();

/** capstan.api.v1.Application bytes of a listed application (list items carry no operation). */
function itemProto(a: StoredApplication): Buffer {
  let bytes = protoOf.get(a);
  if (!bytes) {
    bytes = Buffer.from(apiv1.Application.encode(apiv1.Application.fromJSON(applicationView(a))).finish());
    protoOf.set(a, bytes);
  }
  return bytes;
}

function itemJson(a: StoredApplication): string {
  let text = jsonOf.get(a);
  if (text === undefined) {
    text = JSON.stringify(applicationView(a));
    jsonOf.set(a, text);
  }
  return text;
}

/** The ApplicationList response: `items = 1` (repeated Application), `next_page_token = 2`. */
export function encodedApplicationList(
  items: readonly StoredApplication[],
  nextPageToken: string,
): EncodedResponse {
  return new EncodedResponse(
    () =>
      spliceMessage([
        { field: 1, values: items.map(itemProto) },
        // proto3 leaves a default (empty) string out.
        { field: 2, values: nextPageToken ? [Buffer.from(nextPageToken, 'utf8')] : [] },
      ]),
    () => `{"items":[${items.map(itemJson).join(',')}],"nextPageToken":${JSON.stringify(nextPageToken)}}`,
  );
}
