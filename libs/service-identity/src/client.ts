// The client side: what a service presents when it calls another. Its channel is mutual TLS with
// its own certificate; every call carries its service token, and a delegation when it acts for a
// user (the delegation alone is worth nothing without this service's identity).
import { Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { currentTraceparent } from '@capstan/service';
import { DELEGATION_METADATA_KEY } from './delegation.js';

/** W3C trace context of the calling span, as gRPC metadata. */
export const TRACEPARENT_METADATA_KEY = 'traceparent';
import { channelCredentials, type TlsMaterial } from './tls.js';

export interface ServiceClientIdentity {
  /** Token this service presents to the callee. */
  token: string;
  tls: TlsMaterial;
}

export class ServiceClient {
  readonly credentials: ChannelCredentials;

  constructor(private readonly identity: ServiceClientIdentity) {
    this.credentials = channelCredentials(identity.tls);
  }

  /** Metadata of one call; `delegation` when acting for a user. */
  metadata(delegation?: string): Metadata {
    const md = new Metadata();
    md.set('authorization', `Bearer ${this.identity.token}`);
    if (delegation) md.set(DELEGATION_METADATA_KEY, delegation);
    // The caller's span (tracing on): the callee's span continues its trace.
    const traceparent = currentTraceparent();
    if (traceparent) md.set(TRACEPARENT_METADATA_KEY, traceparent);
    return md;
  }
}
