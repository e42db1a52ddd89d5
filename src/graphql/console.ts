import type { GraphiQLOptions } from 'graphql-yoga';

/**
 * The operations a new console opens with: log in, send, list, send and check a one-time code,
 * follow a campaign, watch messages live. The token of `Login` goes in the Authorization header, which is there to fill in.
 */
export const CONSOLE_EXAMPLES = `# Tern GraphQL console. Run Login first, put its token in the Authorization header
# below (Headers tab), then run the others. Ctrl+Space completes, the Docs panel describes every field.
# MessageUpdates stays open and shows each change of the account's messages as it happens (send one).

mutation Login {
  login(input: { email: "you@example.com", password: "your password" }) {
    __typename
    ... on Token { token expiresIn accountId }
    ... on Error { code message }
  }
}

mutation SendMessage {
  sendMessage(input: { to: "5511999990000", message: "Hello from Tern" }) {
    __typename
    ... on MessageAcceptance { id status to }
    ... on ValidationError { code message details { field issue } }
  }
}

query Messages {
  messages(perPage: 10) {
    __typename
    ... on MessagePage {
      total
      nodes { id to status segments createdAt deliveredAt error { code message } }
    }
    ... on Error { code message }
  }
}

mutation StartVerification {
  startVerification(input: { to: "5511999990000", codeLength: 6, ttl: 600 }) {
    __typename
    ... on Verification { id status expiresAt }
    ... on Error { code message }
  }
}

mutation CheckVerification {
  checkVerification(id: "verification id", input: { code: "123456" }) {
    __typename
    ... on VerificationCheck { id status }
    ... on Error { code message }
  }
}

query Campaign {
  campaign(id: "campaign id") {
    __typename
    ... on Campaign {
      name
      status
      stats { contacts queued sent delivered failed optedOut }
    }
    ... on Error { code message }
  }
}

subscription MessageUpdates {
  messageUpdated {
    kind
    status
    message { id to status sentAt deliveredAt }
  }
}
`;

export const CONSOLE_HEADERS = JSON.stringify({ Authorization: 'Bearer <token>' }, null, 2);

export const CONSOLE_OPTIONS: GraphiQLOptions = {
  title: 'Tern GraphQL console',
  defaultTabs: [{ query: CONSOLE_EXAMPLES, headers: CONSOLE_HEADERS }],
  defaultHeaders: CONSOLE_HEADERS,
  headers: CONSOLE_HEADERS,
  defaultEditorToolsVisibility: 'headers',
  // The descriptions of the schema are the console's documentation.
  schemaDescription: true,
};
