import {
  CAMPAIGN_ACTIONS,
  type CampaignAction,
  describeTransition,
} from '../../modules/campaigns/campaign-transitions.js';
import type { RestRoute } from '../route-table.js';
import { PAGE_QUERY } from './pagination.js';

const byId = { params: { campaign: 'id' } };

/** POST /v1/campaigns/:campaign/start runs StartCampaign, and so on for every action of the transition table. */
const action = (name: CampaignAction): RestRoute => ({
  method: 'POST',
  path: `/v1/campaigns/:campaign/${name}`,
  operation: `${name[0]!.toUpperCase()}${name.slice(1)}Campaign`,
  ...byId,
  status: 200,
  summary: `${name[0]!.toUpperCase()}${name.slice(1)} a campaign`,
  description: `${describeTransition(name)}; 409 invalid_state from any other status`,
});

export const campaignRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/campaigns',
    operation: 'CreateCampaign',
    body: 'input',
    status: 201,
    summary: 'Create a campaign',
    description: 'Create a campaign (status scheduled); with send_at it starts by itself at that time',
  },
  {
    method: 'GET',
    path: '/v1/campaigns',
    operation: 'Campaigns',
    query: { status: 'status', ...PAGE_QUERY },
    status: 200,
    summary: 'List campaigns',
    description: 'List campaigns, newest first, with their stats',
  },
  {
    method: 'GET',
    path: '/v1/campaigns/:campaign',
    operation: 'Campaign',
    ...byId,
    status: 200,
    summary: 'Read a campaign',
    description: 'Read a campaign with its stats',
  },
  {
    method: 'PATCH',
    path: '/v1/campaigns/:campaign',
    operation: 'UpdateCampaign',
    ...byId,
    body: 'input',
    status: 200,
    summary: 'Change a campaign',
    description: 'Change any of the fields given at creation',
  },
  {
    method: 'DELETE',
    path: '/v1/campaigns/:campaign',
    operation: 'DeleteCampaign',
    ...byId,
    status: 200,
    summary: 'Delete a campaign',
    description: 'Delete a campaign and stop its dispatch',
  },
  ...CAMPAIGN_ACTIONS.map(action),
  {
    method: 'POST',
    path: '/v1/campaigns/:campaign/contacts',
    operation: 'AddContact',
    params: { campaign: 'campaign' },
    body: 'input',
    status: 201,
    summary: 'Add a contact',
    description: 'Add one contact; 409 conflict when its phone is already in the campaign',
  },
  {
    method: 'GET',
    path: '/v1/campaigns/:campaign/contacts',
    operation: 'Contacts',
    params: { campaign: 'campaign' },
    query: { tag: 'tag', ...PAGE_QUERY },
    status: 200,
    summary: 'List contacts',
    description: "List the campaign's contacts in the order they were added, optionally those with a tag",
  },
  {
    method: 'GET',
    path: '/v1/campaigns/:campaign/contacts/:contact',
    operation: 'Contact',
    params: { campaign: 'campaign', contact: 'id' },
    status: 200,
    summary: 'Read a contact',
    description: 'Read one contact',
  },
];
