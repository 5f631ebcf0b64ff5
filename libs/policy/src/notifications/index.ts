export { compileCondition, ExprError, type Condition } from './expr.js';
export {
  defaultSubscriptionsFor,
  readCondition,
  readNotificationsConfig,
  subscriptionsOf,
  type DefaultSubscription,
  type NotificationService,
  type NotificationTemplate,
  type NotificationsConfig,
  type Subscription,
  type TriggerCondition,
} from './config.js';
